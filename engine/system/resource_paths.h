#pragma once

#include <string>

namespace kwb {

// The folder holding tasks/, solutions/ and workspace/. Resolution: $KWB_RESOURCES, then the
// install layout (<prefix>/share/kernel-workbench/resources next to bin/), then the source tree
// this binary was built from, so a build runs in place without installing.
std::string resourceRoot();
std::string bundledTasksDirectory();
std::string bundledSolutionsDirectory();

// Absolute path of the running executable (from /proc/self/exe).
std::string currentExecutablePath();

} // namespace kwb
