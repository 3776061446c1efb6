#include "commands.h"
#include "daemon_evaluation.h"
#include "engine/evaluation/evaluator.h"
#include "evaluation_printer.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

namespace kwb::cli {
namespace {

// `kwb eval --counters ...`: what EvaluationOptions::counters is made of.
struct CounterOptions {
    bool wanted = false;
    std::vector<std::string> sections;
    std::string kernel;
    int launches = 4;
    std::string folder;
    bool allKernels = false;
};

struct CommonEvalOptions {
    std::string device = "auto";
    int checks = 5;
    int timeout = 600;
    int iterations = 30;
    double targetCv = 0.03;
    int maxRounds = 15;
    int timingBudget = 20;
    bool json = false;
    std::string python;
    std::uint64_t seed = 0;
    std::string serve;
    double headStartUs = 0.0;
};

void addCommonOptions(CLI::App* cmd, CommonEvalOptions& o) {
    cmd->add_option("--device", o.device, "auto, cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option("--timeout", o.timeout, "Wall-clock limit per stage, seconds")
        ->check(CLI::Range(1, 86400));
    cmd->add_option("--iterations", o.iterations, "Timed calls per variant")
        ->check(CLI::Range(1, 100000));
    cmd->add_option("--target-cv", o.targetCv,
                    "Repeat timing rounds until per-round medians vary less than this")
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--max-rounds", o.maxRounds, "At most this many timing rounds")
        ->check(CLI::Range(1, 10000));
    cmd->add_option("--timing-budget", o.timingBudget, "At most this many seconds of timing")
        ->check(CLI::Range(0, 86400));
    cmd->add_option("--head-start-us", o.headStartUs,
                    "GPU spin queued before each timed call's start event, microseconds, so "
                    "that the host's way to the first kernel is not timed (default 0)")
        ->check(CLI::Range(0.0, 10000.0));
    cmd->add_option("--python", o.python, "Task Python (default: auto-detect)");
    cmd->add_option("--seed", o.seed, "Seed for inputs (default: fresh per evaluation)");
    cmd->add_flag("--json", o.json, "Print the JSON result record");
    cmd->add_option("--serve", o.serve, kServeOptionHelp)
        ->check(CLI::IsMember({"auto", "on", "off"}));
}

EvaluationOptions toOptions(const CommonEvalOptions& o) {
    EvaluationOptions options;
    options.device = deviceChoiceFrom(o.device);
    options.checks = o.checks;
    options.stageTimeout = std::chrono::seconds(o.timeout);
    options.iterations = o.iterations;
    options.rounds = std::min(5, o.iterations);
    options.targetCv = o.targetCv;
    options.maxRounds = std::max(o.maxRounds, options.rounds);
    options.timingBudget = std::chrono::seconds(o.timingBudget);
    options.seed = o.seed;
    options.headStartMicroseconds = o.headStartUs;
    return options;
}

// The profile's options, with what the command line gave explicitly on top.
EvaluationOptions profiledOptions(const CLI::App* cmd, const CommonEvalOptions& o,
                                  EvaluationProfile profile) {
    EvaluationOptions options;
    applyEvaluationProfile(options, profile);
    options.device = deviceChoiceFrom(o.device);
    options.stageTimeout = std::chrono::seconds(o.timeout);
    options.seed = o.seed;
    if (cmd->count("--checks"))
        options.checks = o.checks;
    if (cmd->count("--iterations")) {
        options.iterations = o.iterations;
        options.rounds = std::min(options.rounds, o.iterations);
    }
    if (cmd->count("--target-cv"))
        options.targetCv = o.targetCv;
    if (cmd->count("--max-rounds"))
        options.maxRounds = o.maxRounds;
    if (cmd->count("--timing-budget"))
        options.timingBudget = std::chrono::seconds(o.timingBudget);
    options.headStartMicroseconds = o.headStartUs;
    options.maxRounds = std::max(options.maxRounds, options.rounds);
    for (const char* name : {"--checks", "--iterations", "--target-cv", "--max-rounds",
                             "--timing-budget", "--head-start-us"})
        options.profileModified = options.profileModified || cmd->count(name) > 0;
    return options;
}

// The record on standard output (JSON or text); no record (nothing could run) ends the command.
const EvaluationResult& printedRecord(const std::optional<EvaluationResult>& ran, bool json) {
    if (!ran)
        throw CLI::RuntimeError(kExitFailure);
    if (json)
        std::cout << toJson(*ran).dump(2) << "\n";
    else
        printEvaluation(std::cout, *ran);
    return *ran;
}

} // namespace

void addEvalCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "eval", "Evaluate a workspace (or a KernelBench pair): compile, verify, profile, reward");
    auto o = std::make_shared<CommonEvalOptions>();
    auto target = std::make_shared<std::string>();
    auto candidate = std::make_shared<std::string>();
    auto noProfile = std::make_shared<bool>(false);
    auto refresh = std::make_shared<bool>(false);
    auto profileFlagged = std::make_shared<bool>(true);
    auto threshold = std::make_shared<double>(1.05);
    auto fast = std::make_shared<bool>(false);
    auto profileName = std::make_shared<std::string>();
    cmd->add_option("workspace", *target, "Workspace folder, or a reference .py with --candidate")
        ->required();
    cmd->add_option("--profile", *profileName,
                    "Whose rules: cuda-agent (1e-2 tolerances, timing until stable; the default "
                    "for workspaces), kernelbench (KernelBench's tolerance per precision, 5 "
                    "checks, 100 timed calls; the default for file pairs) or rl (rollouts: "
                    "fewer checks and timing rounds, every integrity check). Options given "
                    "explicitly override the profile's")
        ->check(CLI::IsMember({"cuda-agent", "kernelbench", "rl"}));
    cmd->add_option("--candidate", *candidate,
                    "KernelBench ModelNew file (makes WORKSPACE the reference file)");
    cmd->add_option("--checks", o->checks, "Correctness checks with fresh inputs")
        ->check(CLI::Range(1, 1000));
    cmd->add_flag("--no-profile", *noProfile, "Stop after verification");
    cmd->add_flag("--refresh-baselines", *refresh,
                  "Re-time eager and torch.compile even if cached");
    cmd->add_option("--profile-flagged", *profileFlagged,
                    "Time a candidate after a strict finding (its reward is -1 either way): on "
                    "by default, off in the rl profile");
    cmd->add_option("--threshold", *threshold,
                    "Speed-up a milestone needs (1.05: more than 5% faster)")
        ->check(CLI::Range(1.0, 100.0));
    cmd->add_flag("--fast", *fast,
                  "The instant loop: run the stages in a warm worker (torch imported once, a "
                  "forked child per stage) with quick-feedback timing (3 checks, at most 5 "
                  "rounds or 3 s) unless those options are given");
    auto counters = std::make_shared<CounterOptions>();
    cmd->add_flag("--counters", counters->wanted,
                  "Collect hardware counters: the profile stage runs under Nsight Compute (GPU "
                  "only; no speed-up is measured in that evaluation)");
    cmd->add_option("--counters-sections", counters->sections,
                    "ncu sections, comma-separated (default: SpeedOfLight, "
                    "SpeedOfLight_RooflineChart, MemoryWorkloadAnalysis, Occupancy)")
        ->delimiter(',');
    cmd->add_option("--counters-kernel", counters->kernel,
                    "Only kernels whose name matches this regular expression");
    cmd->add_option("--counters-launches", counters->launches, "Kernel launches profiled")
        ->check(CLI::Range(1, 10000));
    cmd->add_flag("--counters-all-kernels", counters->allKernels,
                  "Profile every kernel, not only the workspace's own (its __global__ functions)");
    cmd->add_option("--counters-out", counters->folder,
                    "Folder for the report and its CSV pages (default: the workspace's "
                    "build/counters/<time>)");
    addCommonOptions(cmd, *o);
    cmd->callback([cmd, o, target, candidate, noProfile, refresh, profileFlagged, threshold, fast,
                   profileName, counters] {
        const bool pair = !candidate->empty();
        const EvaluationProfile profile =
            profileName->empty()
                ? (pair ? EvaluationProfile::KernelBench : EvaluationProfile::CudaAgent)
                : *evaluationProfileFrom(*profileName);
        EvaluationOptions options = profiledOptions(cmd, *o, profile);
        if (*fast) // quick feedback while editing; explicit options still win
            applyQuickFeedback(options, {.checks = cmd->count("--checks") > 0,
                                         .maxRounds = cmd->count("--max-rounds") > 0,
                                         .timingBudget = cmd->count("--timing-budget") > 0,
                                         .targetCv = cmd->count("--target-cv") > 0});
        options.reward.speedupThreshold = *threshold;
        options.profile = !*noProfile;
        options.refreshBaselines = *refresh;
        if (cmd->count("--profile-flagged") > 0)
            options.profileFlagged = *profileFlagged;
        if (counters->wanted) {
            for (const std::string& section : counters->sections)
                if (const std::string problem = ncuSectionProblem(section); !problem.empty()) {
                    std::cerr << "kwb: --counters-sections: " << problem << "\n";
                    throw CLI::RuntimeError(kExitUsage);
                }
            options.counters = CounterCollection{counters->sections, counters->kernel,
                                                 counters->launches, counters->folder};
        }
        EvaluationTarget what;
        if (pair) {
            what = EvaluationTarget::forPair(*target, *candidate);
        } else if (std::filesystem::is_directory(*target)) {
            what = EvaluationTarget::forWorkspace(*target);
        } else {
            std::cerr << "kwb: " << *target
                      << " is not a workspace folder (for a file pair, add --candidate FILE)\n";
            throw CLI::RuntimeError(kExitUsage);
        }
        const Evaluator::Progress progress = [&](const std::string& stage) {
            if (!o->json)
                std::cerr << "[" << stage << "]\n";
        };
        const std::optional<EvaluationResult> ran =
            evaluateTargetWhereServed(o->serve, what, options, o->python, progress);
        const EvaluationResult& result = printedRecord(ran, o->json);
        // The evaluation ran: its verdict is in the record, not the exit code. Only a missing
        // Python (nothing could run) is a failure of the command itself.
        if (result.failureKind == "python_missing" || result.failureKind == "missing_file")
            throw CLI::RuntimeError(kExitFailure);
    });
}

void addBaselineCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand("baseline", "Time eager PyTorch and torch.compile for a task");
    auto o = std::make_shared<CommonEvalOptions>();
    auto task = std::make_shared<std::string>();
    cmd->add_option("task", *task, "KernelBench task file")->required();
    addCommonOptions(cmd, *o);
    cmd->callback([o, task] {
        const EvaluationOptions options = toOptions(*o);
        const std::optional<EvaluationResult> ran = evaluateWhereServed(
            o->serve, [&] { return Evaluator(o->python).baseline(*task, options); },
            [&](std::string* error) {
                return baselineThroughDaemon(*task, options, o->python, error);
            });
        const EvaluationResult& result = printedRecord(ran, o->json);
        if (!result.failureKind.empty())
            throw CLI::RuntimeError(kExitFailure);
    });
}

} // namespace kwb::cli
