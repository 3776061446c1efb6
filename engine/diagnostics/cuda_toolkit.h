#pragma once

#include <string>
#include <vector>

namespace kwb::diagnostics {

// Where the CUDA toolkit lives on this machine: $CUDA_HOME or $CUDA_PATH when set, else the one
// kwb was built against, else the folder above the `nvcc` on PATH. Empty root when none exists.
struct CudaToolkit {
    std::string root;
    std::string nvcc;                     // empty when not found
    std::vector<std::string> includeDirs; // include/ and include/cccl/ (cuda/std, cub) if present

    // A tool from PATH first, then from <root>/bin; empty when neither has it.
    std::string findTool(const std::string& name) const;
};

CudaToolkit locateCudaToolkit();

} // namespace kwb::diagnostics
