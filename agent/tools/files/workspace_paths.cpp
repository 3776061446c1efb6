#include "agent/tools/files/workspace_paths.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace kwb::agent {
namespace {

// Like weakly_canonical, but a symlink whose target does not exist yet is still followed: a
// write through it would create the target, wherever it points.
bool resolveSymlinks(const fs::path& absolute, fs::path& resolved) {
    std::vector<fs::path> pending;
    for (const auto& part : absolute.relative_path())
        pending.push_back(part);
    std::reverse(pending.begin(), pending.end());
    fs::path current = "/";
    int hops = 0;
    while (!pending.empty()) {
        const fs::path part = pending.back();
        pending.pop_back();
        if (part.empty() || part == ".")
            continue;
        if (part == "..") {
            current = current.parent_path();
            continue;
        }
        const fs::path next = current / part;
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(next, ec))) {
            current = next;
            continue;
        }
        if (++hops > 40)
            return false;
        const fs::path target = fs::read_symlink(next, ec);
        if (ec)
            return false;
        if (target.is_absolute())
            current = "/";
        std::vector<fs::path> parts(target.begin(), target.end());
        for (auto it = parts.rbegin(); it != parts.rend(); ++it)
            if (!it->empty() && *it != "/")
                pending.push_back(*it);
    }
    resolved = current;
    return true;
}

std::string underWorkspace(const fs::path& root, const fs::path& path) {
    const fs::path relative = path.lexically_relative(root);
    if (relative.empty())
        return {};
    const std::string text = relative.generic_string();
    if (text == ".." || text.rfind("../", 0) == 0)
        return {};
    return text;
}

} // namespace

std::vector<std::string> protectedEntriesIn(const std::string& workspace) {
    std::vector<std::string> entries;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(workspace, ec)) {
        const std::string name = entry.path().filename().string();
        if (isProtectedWorkspacePath(name))
            entries.push_back(entry.path().string());
    }
    std::sort(entries.begin(), entries.end());
    return entries;
}

ResolvedPath resolveWorkspacePath(const std::string& workspace, const std::string& path,
                                  PathAccess access) {
    ResolvedPath result;
    if (path.empty()) {
        result.error = "empty path";
        return result;
    }
    if (path.find('\0') != std::string::npos) {
        result.error = "the path contains a NUL byte";
        return result;
    }
    std::error_code ec;
    const fs::path rootGiven = fs::absolute(workspace, ec).lexically_normal();
    fs::path root;
    if (!resolveSymlinks(rootGiven, root)) {
        result.error = "cannot resolve the workspace " + workspace;
        return result;
    }
    const fs::path given = fs::path(path).is_absolute() ? fs::path(path) : rootGiven / path;
    const fs::path lexical = given.lexically_normal();
    fs::path resolved;
    if (!resolveSymlinks(lexical, resolved)) {
        result.error = path + ": too many levels of symbolic links";
        return result;
    }
    const std::string relative = underWorkspace(root, resolved);
    if (relative.empty()) {
        result.error =
            path + (resolved == lexical ? "" : " (which resolves to " + resolved.string() + ")") +
            " is outside the workspace; tools only reach files under " + root.string();
        return result;
    }
    result.absolute = resolved.string();
    result.relative = relative;
    if (access == PathAccess::Write) {
        const std::string lexicalRelative = underWorkspace(rootGiven, lexical);
        for (const std::string& candidate : {relative, lexicalRelative})
            if (!candidate.empty() && isProtectedWorkspacePath(candidate)) {
                result.error = candidate +
                               " is protected (the task, the fixed binding and utils/ are "
                               "read-only); write your code in model_new.py and kernels/";
                return result;
            }
    }
    return result;
}

} // namespace kwb::agent
