#pragma once

// Whole-file reads and writes for tests that set up workspaces and check what tools wrote.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace kwb::test {

inline std::string readText(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

// Creates the parent folders first.
inline void writeText(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

// A fresh folder under the temporary folder, named from `label` and this process, removed with
// everything in it when the object goes.
class ScopedTestFolder {
public:
    explicit ScopedTestFolder(const std::string& label)
        : path_(std::filesystem::temp_directory_path() /
                ("kwb-test-" + label + "-" + std::to_string(::getpid()))) {
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~ScopedTestFolder() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    ScopedTestFolder(const ScopedTestFolder&) = delete;
    ScopedTestFolder& operator=(const ScopedTestFolder&) = delete;

    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

} // namespace kwb::test
