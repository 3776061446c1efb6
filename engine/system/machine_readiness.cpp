#include "engine/system/machine_readiness.h"

namespace kwb {

std::vector<ReadinessItem> machineReadiness(const SystemReport& report) {
    const bool nvrtcLoaded = report.nvrtcLoaded;
    const std::string& bubblewrap = report.bubblewrap;
    const bool bubblewrapWorks = report.bubblewrapWorks;
    std::vector<ReadinessItem> items;
    const PythonProbe& python = report.python;

    items.push_back(
        {"NVIDIA GPU and driver", report.gpus.hasGpu(),
         report.gpuText() + " (" + report.driverText() + ")",
         "Kernels are verified on the CPU only: no GPU timing, speed-ups or rewards above 1, no "
         "CUPTI timelines or hardware counters, and fast-path workspaces stop after the compile.",
         "Install NVIDIA's driver for the GPU (Debian: the nvidia-driver package from non-free; "
         "Ubuntu: ubuntu-drivers install), then View > Re-detect System."});

    items.push_back(
        {"CUDA toolkit (NVRTC)", nvrtcLoaded,
         report.cudaText() +
             (report.nvrtcLibrary.empty() ? std::string() : " (" + report.nvrtcLibrary + ")"),
         "No kernel diagnostics, PTX, SASS or resource use while typing, and no fast-path "
         "kernels.",
         "Install CUDA 13 (NVIDIA's cuda-toolkit-13-0, or just cuda-nvrtc-13-0), or set "
         "KWB_NVRTC_LIBRARY to a libnvrtc.so.13."});

    items.push_back(
        {"Python with PyTorch", python.usable(),
         python.summary() + (python.path.empty() ? std::string() : " at " + python.path),
         "Nothing can be verified or profiled (tasks are PyTorch models), and agents cannot run "
         "their Verify and Profile tools.",
         "tools/setup.sh makes the project's virtual environment with torch 2.11; or pip install "
         "torch==2.11.0 into a Python 3.10+ and choose it in File > Settings (or KWB_PYTHON)."});

    items.push_back(
        {"torch.compile", python.usable() && python.hasTorchCompile,
         python.hasTorchCompile ? "available in torch " + python.torchVersion
                                : "not available in this Python",
         "Speed-ups are measured against eager PyTorch only; the milestone reward for beating "
         "torch.compile (3) cannot be earned.",
         "A torch 2.x with its compiler (the pip wheel has it) and a C++ compiler on PATH "
         "(Debian: build-essential)."});

    items.push_back(
        {"Extension builds (ninja)", !report.ninja.empty(),
         report.ninja.empty() ? "no ninja beside the task Python or on PATH"
                              : "ninja at " + report.ninja,
         "Workspaces in CUDA Agent's layout (kernels built as a torch extension) cannot build; "
         "fast-path (NVRTC) workspaces are not affected.",
         "pip install ninja into the task Python's environment (tools/setup.sh does), or sudo "
         "apt install ninja-build."});

    std::string sandbox = bubblewrap.empty() ? "bubblewrap not found"
                          : bubblewrapWorks
                              ? "bubblewrap at " + bubblewrap
                              : "bubblewrap at " + bubblewrap + " cannot create namespaces here";
    items.push_back(
        {"Sandbox (bubblewrap)", !bubblewrap.empty() && bubblewrapWorks, std::move(sandbox),
         "Candidate code runs under resource limits only, without a file system, network and "
         "processes of its own: results are flagged sandbox_weak, and agents should not run "
         "unattended.",
         "sudo apt install bubblewrap (with unprivileged user namespaces allowed, as Debian and "
         "Ubuntu do by default)."});
    return items;
}

} // namespace kwb
