#pragma once

#include <string>
#include <vector>

namespace kwb::diagnostics {

enum class CompilePath { Nvrtc, Nvcc };
std::string toString(CompilePath path);

struct CompilePathChoice {
    CompilePath path = CompilePath::Nvrtc;
    std::string reason; // "device code only" or what made NVRTC unfit, with its line
    int line = 0;       // the line that decided it (0 for device-only sources)
};

// NVRTC compiles device code only and opens no host C++ headers, so a file goes to nvcc, first
// match wins, when it has
//  1. a kernel launch `<<<` outside comments and string/char literals (a host launcher);
//  2. an #include of torch, ATen, c10, pybind11 or Python.h;
//  3. an #include of a host runtime header (<cuda_runtime.h>, <cuda_runtime_api.h>, <cuda.h>):
//     such files are written for nvcc's host + device model, and under NVRTC's -default-device
//     their host functions would become device functions;
//  4. an #include <...> that none of `toolkitIncludeDirs` holds (the C and C++ standard
//     library: <cstdint>, <vector>, <cmath>, ...), which NVRTC cannot open.
// Quoted includes are fine (both paths get the file's folder and kernels/ as include paths).
// Everything else is device code: NVRTC.
CompilePathChoice chooseCompilePath(const std::string& source,
                                    const std::vector<std::string>& toolkitIncludeDirs);

// The source with comments and string/char literals replaced by spaces (newlines kept, so line
// numbers stay); with `keepStrings`, literals stay (an #include "name" keeps its name).
std::string blankCommentsAndLiterals(const std::string& source, bool keepStrings);

} // namespace kwb::diagnostics
