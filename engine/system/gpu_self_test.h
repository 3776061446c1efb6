#pragma once

#include <string>

namespace kwb {

// End-to-end proof that the GPU path works on this machine: NVRTC compiles a kernel for the
// device's arch, the dlopen'ed driver loads and launches it, and the result is checked on the
// host. Used by `kwb doctor` and the GPU tests.
struct GpuSelfTestResult {
    bool ran = false; // false: no usable GPU here (see message); not a failure
    bool passed = false;
    std::string message;
    std::string deviceName;
    std::string arch;
    double maxAbsError = 0.0;
    double compileMs = 0.0;
};

GpuSelfTestResult runGpuSelfTest(int elementCount = 1 << 20);

} // namespace kwb
