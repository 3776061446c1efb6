#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kwb {

struct GpuDevice {
    int ordinal = 0;
    std::string name;
    int computeMajor = 0;
    int computeMinor = 0;
    std::size_t totalMemoryBytes = 0;
    int multiprocessorCount = 0;

    std::string arch() const { return "sm_" + std::to_string(computeMajor * 10 + computeMinor); }
};

// What the driver reports. A machine without a driver or GPU is a normal state, described in
// `status`, never an error the caller must handle.
struct GpuInventory {
    bool driverLoaded = false;
    int driverVersion = 0; // CUDA version the driver supports, e.g. 13000
    std::vector<GpuDevice> devices;
    std::string status; // "1 GPU: NVIDIA H200 (sm_90)" or why there is none

    bool hasGpu() const { return !devices.empty(); }
};

GpuInventory detectGpus();

} // namespace kwb
