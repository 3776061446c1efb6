#include "engine/diagnostics/cuda_toolkit.h"

#include "engine/process/process_runner.h"
#include "kwb/version.h"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kwb::diagnostics {
namespace {

bool isExecutable(const fs::path& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

} // namespace

std::string CudaToolkit::findTool(const std::string& name) const {
    if (std::string onPath = findExecutable(name); !onPath.empty())
        return onPath;
    if (!root.empty() && isExecutable(fs::path(root) / "bin" / name))
        return (fs::path(root) / "bin" / name).string();
    return {};
}

CudaToolkit locateCudaToolkit() {
    std::vector<std::string> candidates;
    for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* value = std::getenv(variable); value && *value)
            candidates.emplace_back(value);
    candidates.emplace_back(build::kCudaToolkitRoot);
    if (std::string nvcc = findExecutable("nvcc"); !nvcc.empty())
        candidates.push_back(fs::path(nvcc).parent_path().parent_path().string());

    CudaToolkit toolkit;
    for (const auto& candidate : candidates) {
        std::error_code ec;
        if (candidate.empty() || !fs::is_directory(fs::path(candidate) / "include", ec))
            continue;
        toolkit.root = candidate;
        break;
    }
    if (toolkit.root.empty())
        return toolkit;
    const fs::path root(toolkit.root);
    if (isExecutable(root / "bin" / "nvcc"))
        toolkit.nvcc = (root / "bin" / "nvcc").string();
    toolkit.includeDirs.push_back((root / "include").string());
    std::error_code ec;
    if (fs::is_directory(root / "include" / "cccl", ec))
        toolkit.includeDirs.push_back((root / "include" / "cccl").string());
    return toolkit;
}

} // namespace kwb::diagnostics
