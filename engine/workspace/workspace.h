#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kwb {

// A CUDA-Agent-compatible workspace: model.py (the task), model_new.py, kernels/, the fixed
// binding.cpp + binding_registry.h, SKILL.md and utils/ (compile / verification / profiling).
struct WorkspaceInitOptions {
    std::string solutionDirectory; // start from this model_new.py + kernels/ instead of the starter
    bool overwrite = false;        // allow a non-empty target folder
    // The fast-path flavour's starter: kernels/*.cu hold device code only (NVRTC) and
    // model_new.py launches them with the kwb_kernels runtime; no torch-extension build.
    bool fastPath = false;
};

struct WorkspaceInitResult {
    bool ok = false;
    std::string error;
    std::string directory;
    std::vector<std::string> protectedFiles; // workspace-relative
};

WorkspaceInitResult initWorkspace(const std::string& taskPath, const std::string& directory,
                                  const WorkspaceInitOptions& options = {});

// The outcome of checking protected files against the hashes taken at init. Changed or missing
// files are restored from the pristine copies, and named here.
struct ProtectedFilesCheck {
    bool manifestFound = false;
    std::vector<std::string> modified;
    std::vector<std::string> missing;
    std::vector<std::string> added; // new files under utils/
    bool restored = false;
    std::string error;

    bool clean() const {
        return manifestFound && modified.empty() && missing.empty() && added.empty();
    }
    std::string describe() const;
};

ProtectedFilesCheck checkAndRestoreProtectedFiles(const std::string& directory);

// True when the folder looks like a workspace (has model.py and model_new.py).
bool isWorkspace(const std::string& directory);

// The files an agent may not change, by path relative to the workspace root: the task
// (model.py), the fixed binding (binding*) and the helpers (utils/ and everything in it).
// The evaluator hashes exactly these; the agent's tools refuse to write them.
bool isProtectedWorkspacePath(std::string_view relative);

} // namespace kwb
