#include "commands.h"
#include "engine/system/resource_paths.h"
#include "engine/system/system_report.h"
#include "engine/timeline/injection_library.h"
#include "kwb/version.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

namespace kwb::cli {
namespace {

nlohmann::json toJson(const SystemReport& report) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& gpu : report.gpus.devices)
        gpus.push_back({{"ordinal", gpu.ordinal},
                        {"name", gpu.name},
                        {"arch", gpu.arch()},
                        {"memory_bytes", gpu.totalMemoryBytes},
                        {"multiprocessors", gpu.multiprocessorCount}});
    const PythonProbe& py = report.python;
    return {{"version", build::kVersion},
            {"gpu_status", report.gpus.status},
            {"driver_loaded", report.gpus.driverLoaded},
            {"driver_cuda_version", report.gpus.driverVersion},
            {"gpus", gpus},
            {"cuda_toolkit", report.cudaToolkitVersion},
            {"nvrtc", report.nvrtcVersion},
            {"resources", resourceRoot()},
            {"profiler_library", timeline::cuptiInjectionLibraryPath()},
            {"python",
             {{"path", py.path},
              {"source", toString(py.source)},
              {"usable", py.usable()},
              {"python_version", py.pythonVersion},
              {"torch_version", py.torchVersion},
              {"torch_cuda", py.torchCudaVersion},
              {"cuda_available", py.cudaAvailable},
              {"torch_compile", py.hasTorchCompile},
              {"error", py.error}}}};
}

// The CUPTI injection library timelines are recorded with, or why there is none.
std::string profilerText() {
    const std::string library = timeline::cuptiInjectionLibraryPath();
    return library.empty() ? "no CUPTI injection library (timelines unavailable; set "
                             "KWB_CUPTI_INJECTION or build with CUPTI)"
                           : library;
}

} // namespace

void addInfoCommand(CLI::App& app) {
    auto* cmd =
        app.add_subcommand("info", "Show the GPU, driver, CUDA and Python/torch this machine has");
    auto python = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("--python", *python, "Probe this interpreter instead of auto-detecting");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([python, json] {
        SystemReport report = collectSystemReport(*python);
        if (*json) {
            std::cout << toJson(report).dump(2) << "\n";
        } else {
            std::cout << "GPU:      " << report.gpuText() << "\n"
                      << "Driver:   " << report.driverText() << "\n"
                      << "Toolkit:  " << report.cudaText() << "\n"
                      << "Python:   " << report.pythonText() << "\n"
                      << "          " << report.python.path << " ("
                      << toString(report.python.source) << ")\n"
                      << "Tasks:    " << bundledTasksDirectory() << "\n"
                      << "Profiler: " << profilerText() << "\n";
        }
        if (!report.python.usable())
            throw CLI::RuntimeError(kExitFailure);
    });
}

} // namespace kwb::cli
