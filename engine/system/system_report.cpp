#include "engine/system/system_report.h"

#include "engine/cuda/cuda_driver.h"
#include "engine/diagnostics/nvrtc_compiler.h"
#include "engine/process/sandbox.h"
#include "kwb/version.h"

namespace kwb {

std::string SystemReport::gpuText() const {
    if (!gpus.hasGpu())
        return gpus.status;
    const GpuDevice& gpu = gpus.devices.front();
    std::string text =
        gpu.name + " (" + gpu.arch() + ", " + std::to_string(gpu.totalMemoryBytes >> 30) + " GiB)";
    if (gpus.devices.size() > 1)
        text += " +" + std::to_string(gpus.devices.size() - 1);
    return text;
}

std::string SystemReport::driverText() const {
    return gpus.driverLoaded ? "driver CUDA " + formatCudaVersion(gpus.driverVersion) : "no driver";
}

std::string SystemReport::cudaText() const {
    return "CUDA " + cudaToolkitVersion + " / NVRTC " + nvrtcVersion;
}

std::string SystemReport::pythonText() const {
    return python.summary();
}

SystemReport collectSystemReport(const std::string& configuredPython) {
    SystemReport report;
    report.gpus = detectGpus();
    report.cudaToolkitVersion = build::kCudaToolkitVersion;
    report.nvrtcVersion = nvrtcVersion();
    report.nvrtcLoaded = nvrtcAvailable();
    if (report.nvrtcLoaded) {
        report.nvrtcLibrary = nvrtcLibraryPath();
    } else {
        const std::string why = nvrtcUnavailableReason();
        report.nvrtcLibrary = why.substr(0, why.find('\n'));
    }
    report.python = detectPython(configuredPython);
    report.bubblewrap = bubblewrapPath();
    report.bubblewrapWorks = !report.bubblewrap.empty() && bubblewrapUsable();
    report.ninja = ninjaFor(report.python.path);
    return report;
}

} // namespace kwb
