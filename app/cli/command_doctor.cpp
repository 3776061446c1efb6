#include "commands.h"
#include "engine/process/process_runner.h"
#include "engine/system/gpu_self_test.h"
#include "engine/system/machine_readiness.h"
#include "engine/system/resource_paths.h"
#include "engine/system/system_report.h"

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
        // One probe of the machine, the same the workbench's welcome page lists.
        const SystemReport report = collectSystemReport(*python);
        const PythonProbe& probe = report.python;
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
        // NVRTC, ninja and the sandbox turn features off rather than break the machine: a
        // missing one is a warning that says what it turns off. (The GPU is tested below, and
        // the Python above.)
        for (const ReadinessItem& item : machineReadiness(report)) {
            if (item.name.find("GPU") != std::string::npos ||
                item.name.find("Python") != std::string::npos)
                continue;
            if (item.present)
                std::cout << "[ok]   " << item.name << ": " << item.found << "\n";
            else
                std::cout << "[warn] " << item.name << ": " << item.found << ". " << item.withoutIt
                          << " " << item.howToGetIt << "\n";
        }
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
