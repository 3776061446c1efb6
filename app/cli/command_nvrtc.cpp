// kwb nvrtc: the editor's compile diagnostics, headless. One .cu file through NVRTC (device code)
// or nvcc -c (files with host code), with per-kernel resources, optional PTX and SASS, and
// timing modes for bench/diagnostics_latency.sh.
#include "commands.h"
#include "engine/diagnostics/diagnostics_service.h"
#include "engine/diagnostics/kernel_check.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace kwb::cli {
namespace {

using diagnostics::CompilePath;
using diagnostics::KernelCheckRequest;
using diagnostics::KernelCheckResult;
using diagnostics::ResourceUsage;
using Clock = std::chrono::steady_clock;

struct NvrtcOptions {
    std::string file;
    std::string arch;
    std::string path = "auto";
    std::vector<std::string> includeDirs;
    bool json = false;
    bool ptx = false;
    bool sass = false;
    bool syntaxOnly = false;
    bool syntaxFirst = true;
    int repeat = 0;
    int burst = 0;
    int burstIntervalMs = 30;
    int debounceMs = 150;
};

double percentile(std::vector<double> values, double p) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    // Nearest rank: p50 of 20 runs is the 10th value.
    const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p * values.size())));
    return values[std::min(rank, values.size()) - 1];
}

nlohmann::json timingJson(const std::vector<double>& ms) {
    return {{"runs", ms.size()},
            {"p50_ms", percentile(ms, 0.5)},
            {"p90_ms", percentile(ms, 0.9)},
            {"min_ms", ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end())},
            {"max_ms", ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end())},
            {"all_ms", ms}};
}

nlohmann::json kernelJson(const ResourceUsage& k) {
    nlohmann::json j = {{"name", k.name},
                        {"mangled_name", k.mangledName},
                        {"arch", k.arch},
                        {"registers", k.registers},
                        {"barriers", k.barriers},
                        {"static_shared_bytes", k.staticSharedBytes},
                        {"local_bytes", k.localBytes},
                        {"spill_store_bytes", k.spillStoreBytes},
                        {"spill_load_bytes", k.spillLoadBytes},
                        {"cumulative_stack_bytes", k.cumulativeStackBytes},
                        {"max_threads_per_block", k.maxThreadsPerBlock},
                        {"max_threads_from_launch_bounds", k.maxThreadsFromLaunchBounds},
                        {"uses_dynamic_shared", k.usesDynamicShared},
                        {"dynamic_shared_available_bytes", k.dynamicSharedAvailableBytes}};
    j["constant_bytes"] = k.constantBytes ? nlohmann::json(*k.constantBytes) : nlohmann::json();
    return j;
}

nlohmann::json resultJson(const KernelCheckResult& r, const NvrtcOptions& o) {
    nlohmann::json diagnostics = nlohmann::json::array();
    for (const Diagnostic& d : r.diagnostics)
        diagnostics.push_back({{"file", d.file},
                               {"line", d.line},
                               {"column", d.column},
                               {"severity", toString(d.severity)},
                               {"message", d.message}});
    nlohmann::json kernels = nlohmann::json::array();
    for (const ResourceUsage& k : r.kernels)
        kernels.push_back(kernelJson(k));
    nlohmann::json j = {{"file", r.path},
                        {"arch", r.arch},
                        {"compile_path", toString(r.compilePath)},
                        {"path_reason", r.pathReason},
                        {"success", r.success},
                        {"syntax_only", r.syntaxOnly},
                        {"errors", r.errorCount()},
                        {"compile_ms", r.compileMs},
                        {"diagnostics", diagnostics},
                        {"kernels", kernels}};
    if (o.ptx)
        j["ptx"] = r.ptx;
    if (o.sass) {
        nlohmann::json functions = nlohmann::json::array();
        for (const auto& [name, text] : r.sass.functions)
            functions.push_back({{"name", name}, {"sass", text}});
        j["sass"] = {{"available", r.sass.available},
                     {"tool", r.sass.tool},
                     {"error", r.sass.error},
                     {"functions", functions},
                     {"text", r.sass.text}};
    }
    return j;
}

std::string bytesText(long bytes) {
    if (bytes >= 1024 && bytes % 1024 == 0)
        return std::to_string(bytes / 1024) + "K";
    return std::to_string(bytes);
}

void printTable(const KernelCheckResult& r) {
    if (r.kernels.empty())
        return;
    std::cout << "\n"
              << std::left << std::setw(44) << "kernel" << std::right << std::setw(5) << "regs"
              << std::setw(5) << "bar" << std::setw(8) << "smem" << std::setw(10) << "dyn-smem"
              << std::setw(8) << "local" << std::setw(14) << "spill st/ld" << std::setw(8)
              << "stack" << std::setw(13) << "max-threads" << std::setw(8) << "cmem"
              << "\n";
    for (const ResourceUsage& k : r.kernels) {
        std::string name = k.name.size() > 42 ? k.name.substr(0, 39) + "..." : k.name;
        // dyn-smem: what a launch may still request; '*' marks a kernel that uses it.
        std::string dynamic =
            bytesText(k.dynamicSharedAvailableBytes) + (k.usesDynamicShared ? "*" : "");
        std::string threads =
            std::to_string(k.maxThreadsPerBlock) + (k.maxThreadsFromLaunchBounds ? " (lb)" : "");
        std::cout << std::left << std::setw(44) << name << std::right << std::setw(5) << k.registers
                  << std::setw(5) << k.barriers << std::setw(8) << bytesText(k.staticSharedBytes)
                  << std::setw(10) << dynamic << std::setw(8) << k.localBytes << std::setw(14)
                  << (std::to_string(k.spillStoreBytes) + "/" + std::to_string(k.spillLoadBytes))
                  << std::setw(8) << k.cumulativeStackBytes << std::setw(13) << threads
                  << std::setw(8) << (k.constantBytes ? std::to_string(*k.constantBytes) : "-")
                  << "\n";
    }
    std::cout << "(dyn-smem: dynamic shared memory a launch may still request, * = the kernel "
                 "uses it; (lb) = from __launch_bounds__)\n";
}

void printText(const KernelCheckResult& r, const NvrtcOptions& o) {
    for (const Diagnostic& d : r.diagnostics)
        std::cout << formatDiagnostic(d) << "\n";
    std::cout << r.path << ": " << toString(r.compilePath) << " (" << r.pathReason << "), "
              << r.arch << ", " << std::fixed << std::setprecision(0) << r.compileMs << " ms, "
              << (r.success ? "compiled" : std::to_string(r.errorCount()) + " error(s)") << "\n";
    printTable(r);
    if (o.ptx)
        std::cout << "\n" << r.ptx << "\n";
    if (o.sass) {
        if (r.sass.available)
            std::cout << "\n" << r.sass.text << "\n";
        else
            std::cout << "\nSASS: " << (r.sass.error.empty() ? "not available" : r.sass.error)
                      << "\n";
    }
}

// Keystroke-like edits through the DiagnosticsService: `burst` versions of the file, each a
// comment line longer, `interval` apart. Measures from the last submit to the delivery of its
// first result (the diagnostics a user waits for after they stop typing; syntax-only with
// --syntax-first) and of its final one (with PTX and resources).
nlohmann::json runBurst(const KernelCheckRequest& base, const NvrtcOptions& o) {
    std::mutex mutex;
    std::condition_variable delivered;
    std::uint64_t finalGeneration = 0;
    std::uint64_t firstGeneration = 0;
    int deliveries = 0;
    Clock::time_point firstAt, finalAt;
    std::shared_ptr<const KernelCheckResult> last;
    diagnostics::DiagnosticsService::Options options;
    options.debounce = std::chrono::milliseconds(o.debounceMs);
    options.syntaxFirst = o.syntaxFirst;
    options.includeDirs = base.includeDirs;
    diagnostics::DiagnosticsService service(
        [&](const std::string&, std::uint64_t generation,
            std::shared_ptr<const KernelCheckResult> result) {
            std::lock_guard lock(mutex);
            if (firstGeneration != generation) {
                firstGeneration = generation;
                firstAt = Clock::now();
            }
            if (!result->syntaxOnly || result->errorCount() > 0) {
                finalGeneration = generation;
                finalAt = Clock::now();
            }
            last = std::move(result);
            ++deliveries;
            delivered.notify_all();
        },
        options);
    std::string text = base.text;
    std::uint64_t lastGeneration = 0;
    Clock::time_point lastSubmit;
    for (int i = 0; i < o.burst; ++i) {
        text += "// edit " + std::to_string(i) + "\n";
        lastSubmit = Clock::now();
        lastGeneration = service.submit(base.path, text, base.arch);
        if (i + 1 < o.burst)
            std::this_thread::sleep_for(std::chrono::milliseconds(o.burstIntervalMs));
    }
    std::unique_lock lock(mutex);
    delivered.wait(lock, [&] { return finalGeneration == lastGeneration; });
    using Ms = std::chrono::duration<double, std::milli>;
    return {{"submits", o.burst},
            {"interval_ms", o.burstIntervalMs},
            {"debounce_ms", o.debounceMs},
            {"syntax_first", o.syntaxFirst},
            {"requests_started", service.startedCount()},
            {"compiles_cancelled", service.cancelledCount()},
            {"results_delivered", deliveries},
            {"first_result_ms", Ms(firstAt - lastSubmit).count()},
            {"latest_result_ms", Ms(finalAt - lastSubmit).count()},
            {"latest_compile_ms", last ? last->compileMs : 0},
            {"latest_success", last && last->success}};
}

int runNvrtc(const NvrtcOptions& o) {
    std::ifstream in(o.file, std::ios::binary);
    if (!in || std::filesystem::is_directory(o.file)) {
        std::cerr << "kwb nvrtc: cannot read " << o.file << "\n";
        return kExitUsage;
    }
    std::ostringstream text;
    text << in.rdbuf();

    KernelCheckRequest request;
    request.path = o.file;
    request.text = text.str();
    request.arch = o.arch;
    request.includeDirs = o.includeDirs;
    request.wantSass = o.sass;
    request.syntaxOnly = o.syntaxOnly;
    if (o.path == "nvrtc")
        request.forcePath = CompilePath::Nvrtc;
    else if (o.path == "nvcc")
        request.forcePath = CompilePath::Nvcc;

    KernelCheckResult result = diagnostics::checkKernelSource(request);
    std::vector<double> timings = {result.compileMs};
    for (int i = 1; i < o.repeat; ++i)
        timings.push_back(diagnostics::checkKernelSource(request).compileMs);

    nlohmann::json burst;
    if (o.burst > 0) {
        request.arch = result.arch;
        request.forcePath.reset();
        request.syntaxOnly = false;
        burst = runBurst(request, o);
    }

    if (o.json) {
        nlohmann::json j = resultJson(result, o);
        if (o.repeat > 1)
            j["repeat"] = timingJson(timings);
        if (o.burst > 0)
            j["burst"] = burst;
        std::cout << j.dump(2) << "\n";
    } else {
        printText(result, o);
        if (o.repeat > 1)
            std::cout << "\n"
                      << o.repeat << " runs: p50 " << percentile(timings, 0.5) << " ms, p90 "
                      << percentile(timings, 0.9) << " ms\n";
        if (o.burst > 0)
            std::cout << "burst of " << o.burst << " edits " << o.burstIntervalMs
                      << " ms apart: diagnostics " << std::setprecision(0)
                      << burst["first_result_ms"].get<double>() << " ms, full result "
                      << burst["latest_result_ms"].get<double>() << " ms after the last edit ("
                      << burst["requests_started"].get<std::uint64_t>() << " requests started, "
                      << burst["compiles_cancelled"].get<std::uint64_t>()
                      << " compiles cancelled)\n";
    }
    return result.success ? kExitOk : kExitFailure;
}

} // namespace

void addNvrtcCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "nvrtc", "Compile one .cu file for diagnostics and per-kernel resource usage (NVRTC for "
                 "device code, nvcc -c for files with host code)");
    auto o = std::make_shared<NvrtcOptions>();
    cmd->add_option("file", o->file, "The .cu file")->required();
    cmd->add_option("--arch", o->arch, "Target, e.g. sm_90 (default: this GPU's, else sm_90)");
    cmd->add_option("--path", o->path, "auto (default), nvrtc or nvcc")
        ->check(CLI::IsMember({"auto", "nvrtc", "nvcc"}));
    cmd->add_option("-I,--include", o->includeDirs, "Extra include folder (repeatable)");
    cmd->add_flag("--json", o->json, "Print JSON");
    cmd->add_flag("--ptx", o->ptx, "Print the PTX");
    cmd->add_flag("--sass", o->sass, "Print the SASS (needs cuobjdump or nvdisasm)");
    cmd->add_flag("--syntax-only", o->syntaxOnly,
                  "NVRTC's front end only (-fdevice-syntax-only): diagnostics, no resources");
    cmd->add_option("--repeat", o->repeat, "Compile N times and report p50/p90 compile time")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--burst", o->burst,
                    "Then submit N keystroke-like edits to the diagnostics service and time "
                    "the latest result")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--burst-interval-ms", o->burstIntervalMs, "Time between burst edits")
        ->check(CLI::Range(0, 10000));
    cmd->add_option("--debounce-ms", o->debounceMs, "The service's debounce during a burst")
        ->check(CLI::Range(0, 10000));
    cmd->add_flag("!--no-syntax-first", o->syntaxFirst,
                  "During a burst, skip the service's syntax-only first step");
    cmd->callback([o] {
        const int code = runNvrtc(*o);
        if (code != kExitOk)
            throw CLI::RuntimeError(code);
    });
}

} // namespace kwb::cli
