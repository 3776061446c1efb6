// `kwb timeline WORKSPACE --out trace.json`: the evaluation's profile stage under the CUPTI
// injection library, turned into a Perfetto / chrome://tracing trace and per-kernel statistics.
#include "commands.h"
#include "daemon_evaluation.h"
#include "engine/cuda/gpu_inventory.h"
#include "engine/evaluation/evaluator.h"
#include "engine/timeline/injection_library.h"
#include "engine/timeline/perfetto_export.h"
#include "engine/timeline/trace_file.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace kwb::cli {
namespace {

struct TimelineOptions {
    std::string workspace;
    std::string out;
    std::string records;
    std::string device = "cuda";
    std::string python;
    std::string serve;
    int iterations = 30;
    int timeout = 600;
    bool jsonSummary = false;
};

struct LoadedTimeline {
    timeline::TimelineSnapshot timeline;
    std::vector<std::string> errors;
    bool header = false;
    bool end = false;
};

LoadedTimeline loadRecords(const std::string& path) {
    timeline::LoadedTrace trace = timeline::loadTraceFile(path);
    LoadedTimeline loaded{trace.timeline, trace.writerErrors, trace.sawHeader, trace.sawEnd};
    if (!loaded.timeline) { // an empty timeline, and the reason with the library's messages
        loaded.timeline = std::make_shared<const timeline::KernelTimeline>();
        loaded.errors.push_back(trace.error);
    }
    return loaded;
}

std::string milliseconds(double ns) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4f", ns / 1e6);
    return text;
}

nlohmann::json summaryJson(const EvaluationResult& r, const LoadedTimeline& loaded,
                           const std::string& trace) {
    const auto& t = *loaded.timeline;
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& s : t.kernelStatistics)
        kernels.push_back({{"name", t.displayName(s.nameId)},
                           {"mangled_name", t.names[s.nameId]},
                           {"count", s.count},
                           {"total_ns", s.totalNs},
                           {"mean_ns", s.meanNs},
                           {"min_ns", s.minNs},
                           {"max_ns", s.maxNs}});
    return {{"trace", trace},
            {"records", r.timelineRecordPath},
            {"verdict", r.verdict()},
            {"candidate_median_ms", r.candidate.medianMs},
            {"eager_median_ms", r.eager.medianMs},
            {"kernel_count", t.kernelCount},
            {"span_ns", t.endNs},
            {"streams", t.streams.size()},
            {"nvtx_threads", t.ranges.size()},
            {"complete", loaded.end},
            {"dropped",
             {{"cupti", t.dropped.cuptiDropped},
              {"malformed", t.dropped.malformed},
              {"buffer_overflow", t.dropped.bufferOverflow},
              {"total", t.dropped.total()}}},
            {"library_messages", loaded.errors},
            {"kernels", kernels}};
}

void printSummary(std::ostream& out, const EvaluationResult& r, const LoadedTimeline& loaded,
                  const std::string& trace) {
    const auto& t = *loaded.timeline;
    out << "verdict    " << r.verdict() << "\n"
        << "trace      " << trace << "  (open in https://ui.perfetto.dev or chrome://tracing)\n"
        << "records    " << r.timelineRecordPath << "\n"
        << "timeline   " << t.kernelCount << " kernels on " << t.streams.size() << " lanes, "
        << t.ranges.size() << " NVTX thread(s), " << milliseconds(static_cast<double>(t.endNs))
        << " ms\n"
        << "dropped    " << t.dropped.total() << " (CUPTI " << t.dropped.cuptiDropped
        << ", malformed " << t.dropped.malformed << ", write failures " << t.dropped.bufferOverflow
        << ")" << (loaded.end ? "" : "; the record file has no end record") << "\n";
    for (const auto& e : loaded.errors)
        out << "note       " << e << "\n";
    if (t.kernelStatistics.empty())
        return;
    out << "\n  count    total ms     mean ms      min ms      max ms  kernel\n";
    for (const auto& s : t.kernelStatistics) {
        char row[96];
        std::snprintf(row, sizeof row, "%7llu %11s %11s %11s %11s  ",
                      static_cast<unsigned long long>(s.count),
                      milliseconds(static_cast<double>(s.totalNs)).c_str(),
                      milliseconds(s.meanNs).c_str(),
                      milliseconds(static_cast<double>(s.minNs)).c_str(),
                      milliseconds(static_cast<double>(s.maxNs)).c_str());
        std::string name = t.displayName(s.nameId);
        if (name.size() > 100)
            name = name.substr(0, 97) + "...";
        out << row << name << "\n";
    }
}

} // namespace

void addTimelineCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "timeline", "Profile a workspace under CUPTI and write a Perfetto / Chrome trace");
    auto o = std::make_shared<TimelineOptions>();
    cmd->add_option("workspace", o->workspace, "Workspace folder")->required();
    cmd->add_option("--out", o->out, "Trace file to write (Chrome trace-event JSON)")->required();
    cmd->add_option("--records", o->records,
                    "Where to keep the raw CUPTI records (default: the workspace's "
                    "build/timelines/)");
    cmd->add_option("--device", o->device, "Only cuda: CUPTI needs a GPU")
        ->check(CLI::IsMember({"cuda"}));
    cmd->add_option("--iterations", o->iterations, "Timed calls per variant")
        ->check(CLI::Range(1, 100000));
    cmd->add_option("--timeout", o->timeout, "Wall-clock limit per stage, seconds")
        ->check(CLI::Range(1, 86400));
    cmd->add_option("--python", o->python, "Task Python (default: auto-detect)");
    cmd->add_option("--serve", o->serve, kServeOptionHelp)
        ->check(CLI::IsMember({"auto", "on", "off"}));
    cmd->add_flag("--json-summary", o->jsonSummary, "Print the summary as JSON");
    cmd->callback([o] {
        if (!fs::is_directory(o->workspace)) {
            std::cerr << "kwb timeline: " << o->workspace << " is not a workspace folder\n";
            throw CLI::RuntimeError(kExitUsage);
        }
        const GpuInventory gpus = detectGpus();
        if (!gpus.hasGpu()) {
            std::cerr << "kwb timeline: no CUDA device: " << gpus.status
                      << " (CUPTI timelines need a GPU)\n";
            throw CLI::RuntimeError(kExitFailure);
        }
        if (timeline::cuptiInjectionLibraryPath().empty()) {
            std::cerr << "kwb timeline: libkwb_cupti_inject.so not found (this build has no "
                         "CUPTI, or set KWB_CUPTI_INJECTION)\n";
            throw CLI::RuntimeError(kExitFailure);
        }
        EvaluationOptions options;
        options.device = DeviceChoice::Cuda;
        options.iterations = o->iterations;
        options.rounds = std::min(5, o->iterations);
        options.maxRounds = options.rounds; // a picture of the run, not a stable measurement
        options.stageTimeout = std::chrono::seconds(o->timeout);
        options.collectTimeline = true;
        options.timelineRecordPath = o->records;
        const EvaluationTarget target = EvaluationTarget::forWorkspace(o->workspace);
        const Evaluator::Progress progress = [&](const std::string& stage) {
            if (!o->jsonSummary)
                std::cerr << "[" << stage << "]\n";
        };
        // Through the daemon, as `kwb eval`: its warm worker and cached baselines serve the
        // profile stage, and its lane keeps the recording from running beside another
        // evaluation's timed calls on the same GPU.
        const std::optional<EvaluationResult> ran =
            evaluateTargetWhereServed(o->serve, target, options, o->python, progress);
        if (!ran)
            throw CLI::RuntimeError(kExitFailure);
        const EvaluationResult& r = *ran;
        if (r.timelineRecordPath.empty() || !fs::exists(r.timelineRecordPath)) {
            std::cerr << "kwb timeline: no timeline was recorded: "
                      << (r.failureKind.empty() ? std::string("the profile stage did not run")
                                                : r.failureKind + ": " + r.failureMessage)
                      << "\n";
            for (const auto& f : r.flags)
                if (f.code == "timeline_unavailable")
                    std::cerr << "  " << f.reason << "\n";
            throw CLI::RuntimeError(kExitFailure);
        }
        const LoadedTimeline loaded = loadRecords(r.timelineRecordPath);
        std::string error;
        if (!timeline::writePerfettoTraceFile(o->out, *loaded.timeline, &error)) {
            std::cerr << "kwb timeline: " << error << "\n";
            throw CLI::RuntimeError(kExitFailure);
        }
        const std::string trace = fs::absolute(o->out).string();
        if (o->jsonSummary)
            std::cout << summaryJson(r, loaded, trace).dump(2) << "\n";
        else
            printSummary(std::cout, r, loaded, trace);
        if (!loaded.header) {
            std::cerr << "kwb timeline: the injection library wrote nothing: CUPTI did not load "
                         "in the profile stage (see its log with kwb eval --json)\n";
            throw CLI::RuntimeError(kExitFailure);
        }
    });
}

} // namespace kwb::cli
