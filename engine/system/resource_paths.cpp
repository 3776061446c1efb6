#include "engine/system/resource_paths.h"

#include "kwb/version.h"

#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

namespace kwb {

std::string currentExecutablePath() {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.string();
}

std::string resourceRoot() {
    if (const char* env = std::getenv("KWB_RESOURCES"); env && *env)
        return env;
    fs::path exe = currentExecutablePath();
    if (!exe.empty()) {
        fs::path installed =
            exe.parent_path().parent_path() / "share" / "kernel-workbench" / "resources";
        if (fs::is_directory(installed / "tasks"))
            return installed.string();
    }
    return (fs::path(build::kSourceDir) / "resources").string();
}

std::string bundledTasksDirectory() {
    return (fs::path(resourceRoot()) / "tasks").string();
}

std::string bundledSolutionsDirectory() {
    return (fs::path(resourceRoot()) / "solutions").string();
}

std::string harnessDirectory() {
    return (fs::path(resourceRoot()) / "harness").string();
}

std::vector<std::string> kwbOwnTrees() {
    return {resourceRoot(), build::kSourceDir};
}

} // namespace kwb
