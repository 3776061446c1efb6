#pragma once

#include <string>
#include <vector>

namespace kwb {

// The folder holding tasks/, solutions/ and workspace/. Resolution: $KWB_RESOURCES, then the
// install layout (<prefix>/share/kernel-workbench/resources next to bin/), then the source tree
// this binary was built from, so a build runs in place without installing.
std::string resourceRoot();
std::string bundledTasksDirectory();
std::string bundledSolutionsDirectory();

// The trusted harness (resources/harness): the only part of the resources a sandboxed stage
// reads at run time.
std::string harnessDirectory();

// kwb's own trees, which sandboxed code must not read (SandboxPolicy::hiddenPaths): the resource
// root (the bundled solutions) and the source tree this binary was built from (the solutions
// again, and the adversarial suite's list of open holes). What a stage needs from them is bound
// back.
std::vector<std::string> kwbOwnTrees();

// Absolute path of the running executable (from /proc/self/exe).
std::string currentExecutablePath();

} // namespace kwb
