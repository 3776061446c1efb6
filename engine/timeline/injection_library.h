#pragma once

#include <map>
#include <string>

namespace kwb::timeline {

// The CUPTI injection library (libkwb_cupti_inject.so), or empty when this build has none.
// Resolution: $KWB_CUPTI_INJECTION, then the install layout (<prefix>/lib/kernel-workbench next
// to bin/), then the build tree this binary came from.
std::string cuptiInjectionLibraryPath();

// The environment a CUDA process needs to record its timeline into `recordPath`:
// CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH both name the injection library (it forwards
// NVTX to the libcupti it shares with torch, so the markers land in the same buffers), and
// KWB_TIMELINE_OUT names the record file.
std::map<std::string, std::string> timelineEnvironment(const std::string& injectionLibrary,
                                                       const std::string& recordPath);

} // namespace kwb::timeline
