#pragma once

#include <stop_token>
#include <string>
#include <vector>

namespace kwb::agent {

struct WorkspaceFiles {
    std::vector<std::string> files; // relative to the workspace, '/'-separated, sorted
    std::string root;               // the workspace, symlinks resolved
    std::string folder;             // the searched folder, relative to the root ("." for it)
    std::string error;
};

// The regular files under `folder` (a path the model gave; default the workspace). The build
// output, .git and __pycache__ are skipped unless `folder` lies inside them: they are large and
// never what the agent is looking for. A symlink is listed only when it resolves inside.
WorkspaceFiles listWorkspaceFiles(const std::string& workspace, const std::string& folder,
                                  std::stop_token stop = {});

} // namespace kwb::agent
