#pragma once

#include "engine/diagnostics/diagnostic.h"

#include <string>
#include <vector>

namespace kwb {

// The fast-path workspace flavour: kernels/*.cu hold device code only and model_new.py launches
// them through the shipped `kwb_kernels` runtime. The engine compiles each file in-process with
// NVRTC into <output>/<stem>.cubin + <stem>.ptx + <stem>.json (the manifest the runtime reads:
// kernel names and parameter types from the PTX). No torch-extension build happens at all.
struct FastKernelBuildRequest {
    std::string workspace;       // kernels/ inside it are compiled
    std::string arch = "sm_90";  // the GPU's arch, or sm_90 when there is none
    std::string outputDirectory; // usually <workspace>/build/kwb_kernels
    std::string cacheDirectory;  // cubins by content hash; empty: no cache
};

struct FastKernelBuildResult {
    bool ok = false;
    std::vector<Diagnostic> diagnostics; // paths relative to the workspace ("kernels/a.cu")
    std::string summary;                 // "NVRTC sm_90: 2 files (1 cached), 0.14 s"
    std::string log;                     // the compilers' logs, per file
    int filesCompiled = 0;
    int filesCached = 0;
    std::vector<std::string> kernels; // every kernel name found, "file.cu: name"
};

FastKernelBuildResult buildFastKernels(const FastKernelBuildRequest& request);

// True when model_new.py imports the fast-path runtime (`import kwb_kernels` or
// `from kwb_kernels ...`), which selects the NVRTC build instead of the torch extension.
bool usesFastKernels(const std::string& candidatePath);

} // namespace kwb
