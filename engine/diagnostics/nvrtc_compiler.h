#pragma once

#include "engine/diagnostics/diagnostic.h"

#include <stop_token>
#include <string>
#include <vector>

namespace kwb {

struct NvrtcRequest {
    std::string source;
    std::string fileName = "kernel.cu"; // shown in diagnostics
    std::string arch = "sm_90";         // a real arch yields a cubin; compute_XX only PTX
    std::vector<std::string> extraOptions;
    std::vector<std::string> nameExpressions; // e.g. "saxpy<float>", resolved to lowered names
    // Checked by NVRTC's flow callback between compiler stages, so a stale compile ends early.
    std::stop_token stop{};
};

struct NvrtcResult {
    bool success = false;
    bool cancelled = false; // `stop` was requested and NVRTC gave up (no output, no diagnostics)
    std::string log;
    std::vector<Diagnostic> diagnostics;
    std::string ptx;
    std::string cubin;                                        // empty for virtual archs
    std::vector<std::pair<std::string, std::string>> lowered; // expression -> mangled name
};

// Compiles device code in-process with NVRTC. Needs no GPU, so editing and diagnostics work on
// any machine with the toolkit. Without NVRTC (engine/cuda/nvrtc_library) the result is one
// error diagnostic saying so.
NvrtcResult compileWithNvrtc(const NvrtcRequest& request);

// Parses NVRTC's log ("file(12): error: text" and the caret line under it, which gives the
// column) into diagnostics; other lines are ignored.
std::vector<Diagnostic> parseNvrtcLog(const std::string& log);

// The NVRTC library's own version, e.g. "13.0"; "not found" without one.
std::string nvrtcVersion();
// Whether NVRTC could be loaded, and if not, why (the places tried).
bool nvrtcAvailable();
std::string nvrtcUnavailableReason();
std::string nvrtcLibraryPath(); // the file loaded; "" when none

} // namespace kwb
