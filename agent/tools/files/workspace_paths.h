#pragma once

#include "engine/workspace/workspace.h"

#include <string>
#include <string_view>
#include <vector>

namespace kwb::agent {

// The agent's files may be anywhere in its workspace and nowhere else; the task, the fixed
// binding and the harness it may read but not change. The rule is the engine's own (the files
// the evaluator hashes), so the tools, the Bash sandbox and the evaluator cannot disagree.
using kwb::isProtectedWorkspacePath; // '/'-separated, workspace-relative

// The protected entries present at the top of `workspace` (absolute paths; utils/ as a folder).
std::vector<std::string> protectedEntriesIn(const std::string& workspace);

enum class PathAccess { Read, Write };

struct ResolvedPath {
    std::string absolute; // every symlink resolved
    std::string relative; // to the workspace, '/'-separated; "." for the workspace itself
    std::string error;    // why the path is refused; empty when it is not

    bool ok() const { return error.empty(); }
};

// Resolves a path the model gave (relative to the workspace, or absolute) through every symlink,
// including a dangling last one, and refuses it when it ends outside the workspace or, for
// writes, on a protected file.
ResolvedPath resolveWorkspacePath(const std::string& workspace, const std::string& path,
                                  PathAccess access);

} // namespace kwb::agent
