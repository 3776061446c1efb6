#pragma once

#include "engine/diagnostic.h"

#include <string>
#include <vector>

namespace kwb {

struct NvrtcRequest {
    std::string source;
    std::string fileName = "kernel.cu"; // shown in diagnostics
    std::string arch = "sm_90";         // a real arch yields a cubin; compute_XX only PTX
    std::vector<std::string> extraOptions;
    std::vector<std::string> nameExpressions; // e.g. "saxpy<float>", resolved to lowered names
};

struct NvrtcResult {
    bool success = false;
    std::string log;
    std::vector<Diagnostic> diagnostics;
    std::string ptx;
    std::string cubin;                                        // empty for virtual archs
    std::vector<std::pair<std::string, std::string>> lowered; // expression -> mangled name
};

// Compiles device code in-process with NVRTC. Needs no GPU, so editing and diagnostics work on
// any machine with the toolkit.
NvrtcResult compileWithNvrtc(const NvrtcRequest& request);

// Parses NVRTC's log ("file(12): error: text") into diagnostics; other lines are ignored.
std::vector<Diagnostic> parseNvrtcLog(const std::string& log);

// The NVRTC library's own version, e.g. "13.0".
std::string nvrtcVersion();

} // namespace kwb
