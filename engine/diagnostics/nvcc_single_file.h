#pragma once

#include "engine/process/process_runner.h"

#include <stop_token>
#include <string>
#include <vector>

namespace kwb::diagnostics {

struct NvccSingleFileRequest {
    std::string nvcc;       // path of the nvcc executable
    std::string sourcePath; // a copy of the edited text, inside `workDirectory`
    std::string workDirectory;
    std::string arch = "sm_90";
    std::vector<std::string> includeDirs;
    std::chrono::milliseconds timeout{120000};
};

struct NvccSingleFileOutput {
    ProcessResult process;
    std::string log;        // stderr then stdout: diagnostics and the ptxas -v lines
    std::string ptx;        // kept by --keep, empty when the compile failed early
    std::string objectPath; // the .o (exists when the compile succeeded)
    std::string cubinPath;  // the kept sm_XX cubin, empty when absent
};

// `nvcc -c -x cu -arch=sm_XX -Xptxas -v -lineinfo --keep` of one file: host and device code,
// no torch, no link. --keep leaves the PTX and cubin in `workDirectory` at no extra cost, where
// a second `-ptx` run would repeat the front end (measured: +0.5 s for gelu.cu on 2 CPU cores).
// A stop request kills nvcc's process group.
NvccSingleFileOutput compileWithNvcc(const NvccSingleFileRequest& request,
                                     std::stop_token stop = {});

} // namespace kwb::diagnostics
