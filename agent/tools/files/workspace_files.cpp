#include "agent/tools/files/workspace_files.h"

#include "agent/tools/files/workspace_paths.h"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace kwb::agent {
namespace {

constexpr std::size_t kMaxEntries = 200000;

bool skippedFolder(const std::string& name) {
    return name == ".git" || name == "__pycache__" || name == "build";
}

} // namespace

WorkspaceFiles listWorkspaceFiles(const std::string& workspace, const std::string& folder,
                                  std::stop_token stop) {
    WorkspaceFiles result;
    const ResolvedPath root = resolveWorkspacePath(workspace, ".", PathAccess::Read);
    const ResolvedPath start =
        resolveWorkspacePath(workspace, folder.empty() ? "." : folder, PathAccess::Read);
    if (!root.ok() || !start.ok()) {
        result.error = root.ok() ? start.error : root.error;
        return result;
    }
    result.root = root.absolute;
    std::error_code ec;
    result.folder = start.relative;
    if (fs::is_regular_file(start.absolute, ec)) {
        const std::string parent = fs::path(start.relative).parent_path().generic_string();
        result.folder = parent.empty() ? "." : parent;
        result.files.push_back(start.relative);
        return result;
    }
    if (!fs::is_directory(start.absolute, ec)) {
        result.error = (folder.empty() ? "." : folder) + " does not exist";
        return result;
    }
    const fs::path base = result.root;
    std::size_t seen = 0;
    for (auto it = fs::recursive_directory_iterator(
             start.absolute, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (++seen > kMaxEntries || stop.stop_requested())
            break;
        const fs::directory_entry& entry = *it;
        const std::string relative = entry.path().lexically_relative(base).generic_string();
        if (entry.is_symlink(ec)) {
            const ResolvedPath target = resolveWorkspacePath(workspace, relative, PathAccess::Read);
            if (target.ok() && fs::is_regular_file(target.absolute, ec))
                result.files.push_back(relative);
            continue;
        }
        if (entry.is_directory(ec)) {
            if (skippedFolder(entry.path().filename().string()))
                it.disable_recursion_pending();
            continue;
        }
        if (entry.is_regular_file(ec))
            result.files.push_back(relative);
    }
    std::sort(result.files.begin(), result.files.end());
    return result;
}

} // namespace kwb::agent
