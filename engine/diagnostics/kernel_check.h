#pragma once

#include "engine/diagnostics/compile_path_choice.h"
#include "engine/diagnostics/diagnostic.h"
#include "engine/diagnostics/resource_usage.h"
#include "engine/diagnostics/sass_listing.h"

#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace kwb::diagnostics {

// One check of a .cu file as the editor holds it: diagnostics, resources, PTX and SASS.
struct KernelCheckRequest {
    std::string path; // the workspace path; diagnostics name it, and its folder is an include path
    std::string text; // the editor's text, which may differ from the file on disk
    std::string arch; // empty: defaultKernelArch()
    std::vector<std::string> includeDirs; // extra, after the file's folder and kernels/
    bool wantSass = false;                // run cuobjdump / nvdisasm when present
    // NVRTC path only: stop after the front end (-fdevice-syntax-only). Diagnostics in a small
    // part of the time (50 of 350 ms CPU for bench/data/kernel_200_lines.cu), but no PTX,
    // resources or SASS. Files that take nvcc get the full check regardless.
    bool syntaxOnly = false;
    std::optional<CompilePath> forcePath; // skip chooseCompilePath (tests, `kwb nvrtc --path`)
};

struct KernelCheckResult {
    std::string path;
    std::string arch;
    CompilePath compilePath = CompilePath::Nvrtc;
    std::string pathReason;  // why this path: chooseCompilePath's reason, or NVRTC's retry
    bool success = false;    // compiled without errors
    bool cancelled = false;  // stopped for a newer request: nothing else here is meaningful
    bool syntaxOnly = false; // only NVRTC's front end ran: diagnostics, no PTX or resources
    std::vector<Diagnostic> diagnostics;
    std::vector<ResourceUsage> kernels;
    std::string ptx;
    SassListing sass; // only when requested
    std::string log;  // the compiler's own text
    double compileMs = 0;

    int errorCount() const;
};

// Compiles with NVRTC in-process (`-Xptxas -v`) when the file is device code, else with
// `nvcc -c` of that one file (see chooseCompilePath). When NVRTC fails only because it cannot
// open an include, the check is repeated with nvcc. Include paths: the file's folder, the
// workspace's kernels/ folder (the file's own folder if it is named kernels, else <folder>/
// kernels when it exists), the extras, then the toolkit's headers. Never throws.
KernelCheckResult checkKernelSource(const KernelCheckRequest& request, std::stop_token stop = {});

// The GPU's arch when engine/gpu_inventory finds one (asked once per process), else sm_90.
std::string defaultKernelArch();

} // namespace kwb::diagnostics
