#include "commands.h"
#include "engine/diagnostics/nvrtc_compiler.h"
#include "engine/process/process_runner.h"
#include "engine/process/process_spawn.h"
#include "engine/process/sandbox.h"
#include "engine/system/gpu_self_test.h"
#include "engine/system/python_environment.h"
#include "engine/system/resource_paths.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

namespace kwb::cli {

void addDoctorCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "doctor",
        "Check this machine end to end: Python/torch, and on a GPU an NVRTC kernel launch");
    auto python = std::make_shared<std::string>();
    cmd->add_option("--python", *python, "Interpreter to check instead of auto-detecting");
    cmd->callback([python] {
        bool healthy = true;
        PythonProbe probe = detectPython(*python);
        std::cout << (probe.usable() ? "[ok]   " : "[FAIL] ") << "python: " << probe.summary()
                  << " [" << probe.path << "]\n";
        healthy &= probe.usable();
#ifdef KWB_HAVE_LIBTORCH
        const auto buildTreeProbe =
            std::filesystem::path(currentExecutablePath()).parent_path().parent_path() /
            "torch_probe" / "kwb-libtorch";
        const auto installed =
            std::filesystem::path(currentExecutablePath()).parent_path() / "kwb-libtorch";
        if (!std::filesystem::exists(installed) && !std::filesystem::exists(buildTreeProbe)) {
            // Packages and the headless bundle leave the libtorch tools out: they need the
            // libtorch of a Python with torch 2.11.
            std::cout << "[skip] libtorch: kwb-libtorch is not installed (a source build has it, "
                         "with kwb-model for local models and training)\n";
        } else {
            ProcessSpec spec;
            spec.argv = {std::filesystem::exists(installed) ? installed.string()
                                                            : buildTreeProbe.string()};
            spec.timeout = std::chrono::seconds(60);
            ProcessResult libtorch = runProcess(spec);
            std::cout << (libtorch.succeeded() ? "[ok]   " : "[FAIL] ")
                      << (libtorch.succeeded()
                              ? libtorch.out.text.substr(0, libtorch.out.text.find('\n'))
                              : "libtorch probe: " + libtorch.statusText())
                      << "\n";
            healthy &= libtorch.succeeded();
        }
#endif
        // Missing NVRTC or bubblewrap turn features off rather than break the machine.
        if (nvrtcAvailable()) {
            std::cout << "[ok]   nvrtc: " << nvrtcVersion() << " (" << nvrtcLibraryPath() << ")\n";
        } else {
            const std::string why = nvrtcUnavailableReason();
            std::cout << "[warn] nvrtc: " << why.substr(0, why.find('\n'))
                      << ": no kernel diagnostics or fast-path kernels\n";
        }
        // Torch extensions (the CUDA-Agent layout) build with ninja; stages find it beside the
        // task Python (pip's ninja in its venv) or on PATH.
        if (probe.usable()) {
            const std::filesystem::path besidePython =
                std::filesystem::path(probe.path).parent_path() / "ninja";
            const std::string ninja = findExecutable(besidePython.string()).empty()
                                          ? findExecutable("ninja")
                                          : besidePython.string();
            if (!ninja.empty())
                std::cout << "[ok]   extension builds: ninja (" << ninja << ")\n";
            else
                std::cout << "[warn] extension builds: no ninja beside " << probe.path
                          << " or on PATH: CUDA-Agent-layout workspaces cannot build their "
                             "kernels (pip install ninja into that Python's environment)\n";
        }
        const std::string bubblewrap = bubblewrapPath();
        if (!bubblewrap.empty() && bubblewrapUsable())
            std::cout << "[ok]   sandbox: bubblewrap (" << bubblewrap << ")\n";
        else
            std::cout << "[warn] sandbox: "
                      << (bubblewrap.empty() ? "no bubblewrap"
                                             : bubblewrap + " cannot create namespaces here")
                      << ": candidate code runs under resource limits only (sandbox_weak)\n";
        GpuSelfTestResult gpu = runGpuSelfTest();
        if (!gpu.ran) {
            std::cout << "[skip] gpu: " << gpu.message << " (CPU mode)\n";
        } else {
            std::cout << (gpu.passed ? "[ok]   " : "[FAIL] ") << "gpu: NVRTC compile "
                      << gpu.compileMs << " ms, launch " << gpu.message << "\n";
            healthy &= gpu.passed;
        }
        if (!healthy)
            throw CLI::RuntimeError(kExitFailure);
    });
}

} // namespace kwb::cli
