#include "engine/process/sandbox.h"
#include "engine/system/python_environment.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace kwb;

namespace {
// Folder resolved, file name kept: a symlinked .venv and its target name the same interpreter.
std::string canonical(const std::string& path) {
    return kwb::resolveFolderOf(path);
}
} // namespace

TEST(PythonEnvironment, AutoDetectFindsTheConfiguredTaskPython) {
    // The build resolved the same interpreter with the same rules (cmake/KwbPython.cmake).
    PythonProbe probe = detectPython("");
    ASSERT_TRUE(probe.usable()) << probe.error;
    EXPECT_EQ(canonical(probe.path), canonical(KWB_TEST_EXPECTED_PYTHON));
    EXPECT_FALSE(probe.torchVersion.empty());
    EXPECT_FALSE(probe.pythonVersion.empty());
    EXPECT_TRUE(probe.hasTorchCompile);
}

TEST(PythonEnvironment, BogusPathIsReportedAsNotFound) {
    PythonProbe probe = detectPython("/definitely/not/a/python3");
    EXPECT_FALSE(probe.usable());
    EXPECT_FALSE(probe.runs);
    EXPECT_EQ(probe.path, "/definitely/not/a/python3");
    EXPECT_NE(probe.error.find("not found"), std::string::npos) << probe.error;
    EXPECT_NE(probe.summary().find("not found"), std::string::npos);
}

TEST(PythonEnvironment, NonPythonExecutableIsRejected) {
    PythonProbe probe = probePython("/bin/true");
    EXPECT_FALSE(probe.usable());
    EXPECT_NE(probe.error.find("did not answer"), std::string::npos) << probe.error;
}

TEST(PythonEnvironment, PythonWithoutTorchSaysSo) {
    // An interpreter started with -S sees no site-packages, so torch cannot be importable.
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "kwb-test-notorch";
    std::filesystem::create_directories(dir);
    const std::filesystem::path wrapper = dir / "python3";
    {
        std::ofstream out(wrapper);
        out << "#!/bin/sh\nexec " << KWB_TEST_EXPECTED_PYTHON << " -I -S \"$@\"\n";
    }
    std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
    PythonProbe probe = probePython(wrapper.string());
    ASSERT_TRUE(probe.runs) << probe.error;
    EXPECT_FALSE(probe.hasTorch);
    EXPECT_FALSE(probe.usable());
    EXPECT_NE(probe.error.find("cannot import torch"), std::string::npos) << probe.error;
    EXPECT_NE(probe.summary().find("without torch"), std::string::npos) << probe.summary();
}

TEST(PythonEnvironment, EnvironmentVariableTakesPrecedence) {
    setenv("KWB_PYTHON", "/bogus/from/env", 1);
    std::vector<PythonCandidate> candidates = pythonCandidates("/bogus/from/settings");
    unsetenv("KWB_PYTHON");
    ASSERT_GE(candidates.size(), 2u);
    EXPECT_EQ(candidates[0].path, "/bogus/from/env");
    EXPECT_EQ(candidates[0].source, PythonSource::Environment);
    EXPECT_EQ(candidates[1].source, PythonSource::Settings);
}

TEST(PythonEnvironment, ExtensionBuildsUseTheNinjaBesideTheInterpreterFirst) {
    namespace fs = std::filesystem;
    const fs::path venv = fs::temp_directory_path() / "kwb-test-ninja-venv" / "bin";
    fs::create_directories(venv);
    const fs::path ninja = venv / "ninja";
    std::ofstream(ninja) << "#!/bin/sh\n";
    fs::permissions(ninja, fs::perms::owner_all);
    EXPECT_EQ(ninjaFor((venv / "python3").string()), ninja.string());
    // Without one beside it: the one on PATH, whatever that is here (or none).
    fs::remove(ninja);
    EXPECT_NE(ninjaFor((venv / "python3").string()), ninja.string());
    const char* savedPath = std::getenv("PATH");
    const std::string saved = savedPath ? savedPath : "";
    setenv("PATH", venv.string().c_str(), 1);
    EXPECT_EQ(ninjaFor((venv / "python3").string()), "");
    setenv("PATH", saved.c_str(), 1);
    fs::remove_all(venv.parent_path());
}
