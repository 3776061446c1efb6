#pragma once

#include "engine/cuda/gpu_inventory.h"
#include "engine/system/python_environment.h"

#include <string>

namespace kwb {

// An immutable snapshot of what this machine can do: GPU and driver, the CUDA toolkit the
// engine was built with, NVRTC, and the Python/torch that runs tasks.
struct SystemReport {
    GpuInventory gpus;
    std::string cudaToolkitVersion;
    std::string nvrtcVersion;
    bool nvrtcLoaded = false;
    std::string nvrtcLibrary; // the file loaded, or why none was (its first line)
    PythonProbe python;
    std::string bubblewrap;       // bubblewrapPath(): "" when there is none
    bool bubblewrapWorks = false; // bubblewrapUsable(): it can create namespaces here
    std::string ninja;            // ninjaFor(python.path): "" when extension builds have none

    std::string gpuText() const;    // "NVIDIA H200 (sm_90)" or "No GPU: ..."
    std::string driverText() const; // "driver CUDA 13.0" or "no driver"
    std::string cudaText() const;   // "CUDA 13.0 / NVRTC 13.0"
    std::string pythonText() const; // PythonProbe::summary()
};

// Slow (seconds: the Python probe imports torch); run it off the UI thread.
SystemReport collectSystemReport(const std::string& configuredPython);

} // namespace kwb
