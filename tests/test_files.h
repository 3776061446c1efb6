#pragma once

// Whole-file reads and writes for tests that set up workspaces and check what tools wrote.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

} // namespace kwb::test
