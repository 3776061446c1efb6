#include "engine/process/folder_containment.h"

#include <algorithm>
#include <iterator>

namespace kwb {

std::filesystem::path resolvedPath(const std::filesystem::path& path) {
    std::error_code ec;
    return std::filesystem::weakly_canonical(path, ec).lexically_normal();
}

bool isWithinFolder(const std::filesystem::path& path, const std::filesystem::path& root) {
    const auto [rootEnd, pathAt] =
        std::mismatch(root.begin(), root.end(), path.begin(), path.end());
    // A trailing separator leaves an empty last element in the root.
    return rootEnd == root.end() || (std::next(rootEnd) == root.end() && rootEnd->empty());
}

} // namespace kwb
