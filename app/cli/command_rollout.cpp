#include "agent/rollout/rollout_runner.h"
#include "agent/rollout/run_export.h"
#include "agent/session/steering.h"
#include "agent/store/trajectory_store.h"
#include "commands.h"
#include "engine/evaluation/evaluation_profile.h"
#include "engine/system/parquet_export.h"
#include "engine/system/python_environment.h"
#include "episode_printer.h"
#include "stop_on_signals.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

namespace kwb::cli {
namespace {
namespace fs = std::filesystem;

int runRollout(
    const std::function<agent::RolloutOutcome(
        agent::RolloutRunner&, const agent::RolloutRunner::Observer&, std::stop_token)>& body,
    const std::string& store, bool asJson) {
    agent::RolloutRunner runner(storePathOr(store));
    // Ctrl+C stops the rollout: episodes running end as cancelled, and `kwb rollout resume` runs
    // their samples again.
    std::stop_source stop;
    std::optional<StopOnSignals> stopOnSignals(std::in_place, stop);
    std::mutex printing;
    const agent::RolloutOutcome outcome = body(
        runner,
        [&](const agent::RolloutProgress& p) {
            std::lock_guard lock(printing);
            std::cerr << "run " << p.run << ": " << p.done << "/" << p.planned << " done";
            if (p.gaveUp)
                std::cerr << ", " << p.gaveUp << " given up";
            if (p.skipped)
                std::cerr << ", " << p.skipped << " skipped";
            if (p.last.id == 0) {
                std::cerr << "; started\n";
                return;
            }
            std::cerr << "; episode " << p.last.id << " " << agent::episodeStatusName(p.last.status)
                      << (p.last.reward ? " reward " + std::to_string(int(*p.last.reward)) : "")
                      << " (" << p.last.task << ")\n";
        },
        stop.get_token());
    stopOnSignals.reset();
    if (!outcome.error.empty() && outcome.status.empty()) {
        std::cerr << "kwb: " << outcome.error << "\n";
        return kExitFailure;
    }
    if (asJson) {
        nlohmann::json skipped = nlohmann::json::array();
        for (const agent::SkippedTask& task : outcome.skippedTasks)
            skipped.push_back({{"task", task.task}, {"reason", task.reason}});
        std::cout << nlohmann::json{{"run", outcome.run},         {"status", outcome.status},
                                    {"planned", outcome.planned}, {"done", outcome.done},
                                    {"gave_up", outcome.gaveUp},  {"skipped", outcome.skipped},
                                    {"skipped_tasks", skipped},   {"error", outcome.error}}
                         .dump()
                  << "\n";
    } else {
        std::cout << "run " << outcome.run << " " << outcome.status << ": " << outcome.done << "/"
                  << outcome.planned << " done, " << outcome.gaveUp << " given up";
        if (outcome.skipped)
            std::cout << ", " << outcome.skipped << " skipped";
        std::cout << "\n";
        // A skip is the task's, not the run's failure: said once per task, with why.
        for (const agent::SkippedTask& task : outcome.skippedTasks)
            std::cout << "skipped " << task.task << ": " << task.reason << "\n";
    }
    if (!outcome.error.empty())
        std::cerr << "kwb: " << outcome.error << "\n";
    return outcome.status == "finished" && outcome.gaveUp == 0 ? kExitOk : kExitFailure;
}

struct RolloutOptions {
    std::string tasks;
    std::size_t limit = 0;
    int episodesPerTask = 1;
    int concurrency = 1;
    int maxTurns = 200;
    int retries = 2;
    std::uint64_t seed = 0;
    std::string provider = "openai";
    std::string modelDevice = "auto";
    std::optional<int> maxTokens;
    std::optional<double> temperature;
    std::string baseUrl;
    std::string model;
    std::string apiKeyEnv;
    std::string device = "auto";
    std::string profile = "rl";
    std::string python;
    std::string store;
    bool json = false;
    bool logprobs = false;
    bool tokenIds = false;
    agent::RunId resumeRun = 0;
};

} // namespace

void addRolloutCommands(CLI::App& app) {
    auto o = std::make_shared<RolloutOptions>();
    auto* cmd = app.add_subcommand(
        "rollout",
        "Run K agent episodes per task of a task set, N at once, recorded as one run "
        "(prints the run id; `kwb rollout resume RUN` continues a stopped or killed one)");
    cmd->add_option("--tasks", o->tasks,
                    "Task set: a KernelBench checkout, a folder of task files, or Ops-6K JSONL");
    cmd->add_option("--limit", o->limit, "The first N tasks (0: all)");
    cmd->add_option("--episodes-per-task", o->episodesPerTask, "K episodes per task")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--concurrency", o->concurrency, "Episodes at once")->check(CLI::Range(1, 256));
    cmd->add_option("--max-turns", o->maxTurns, "Turn limit per episode")
        ->check(CLI::Range(1, 10000));
    cmd->add_option("--retries", o->retries,
                    "Runs again of an episode that ended in an infrastructure error")
        ->check(CLI::Range(0, 100));
    cmd->add_option("--seed", o->seed,
                    "The run's seed: each task's samples ask the model server for seeds drawn "
                    "from it (0, the default: a new one, recorded with the run)");
    addProviderOptions(cmd, o->provider, o->modelDevice);
    cmd->add_option("--base-url", o->baseUrl, "API base URL");
    cmd->add_option("--model", o->model, "Model name");
    cmd->add_option("--api-key-env", o->apiKeyEnv, "Environment variable holding the key");
    cmd->add_option("--device", o->device, "auto, cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option(
           "--profile", o->profile,
           "Evaluation rules: rl (the default: CUDA Agent's verdicts with a smaller timing "
           "budget, warm workers), cuda-agent or kernelbench")
        ->check(CLI::IsMember({"rl", "cuda-agent", "kernelbench"}));
    cmd->add_option("--python", o->python, "Task Python (default: auto-detect)");
    cmd->add_option("--store", o->store, "Trajectory store (default: the state folder)");
    cmd->add_flag("--json", o->json, "Print the outcome as one JSON object");
    cmd->add_flag("--logprobs", o->logprobs,
                  "Keep every reply's sampled tokens and log-probabilities (OpenAI-compatible "
                  "servers that return them)");
    cmd->add_flag("--token-ids", o->tokenIds,
                  "Ask for the tokens as ids as well (vLLM's return_tokens_as_token_ids)");
    addReplyOptions(cmd, o->maxTokens, o->temperature);
    auto* resume = cmd->add_subcommand("resume", "Continue a run with its recorded settings");
    resume->add_option("run", o->resumeRun, "Run id")->required();
    resume->add_option("--store", o->store, "Trajectory store (default: the state folder)");
    resume->add_flag("--json", o->json, "Print the outcome as one JSON object");
    resume->callback([o] {
        const int code = runRollout(
            [o](agent::RolloutRunner& runner, const agent::RolloutRunner::Observer& observer,
                std::stop_token stop) { return runner.resume(o->resumeRun, observer, stop); },
            o->store, o->json);
        if (code != kExitOk)
            throw CLI::RuntimeError(code);
    });
    cmd->callback([o, cmd, resume] {
        if (resume->parsed())
            return;
        if (o->tasks.empty() || o->model.empty()) {
            std::cerr << "kwb: rollout needs --tasks and --model (or: rollout resume RUN)\n";
            throw CLI::RuntimeError(kExitUsage);
        }
        agent::RolloutConfig config;
        config.taskSetPath = o->tasks;
        config.limit = o->limit;
        config.episodesPerTask = o->episodesPerTask;
        config.concurrency = o->concurrency;
        config.maxTurns = o->maxTurns;
        config.infrastructureRetries = o->retries;
        config.seed = o->seed;
        config.provider = agent::ProviderSettings::defaultsFor(
            agent::parseProviderKind(o->provider).value_or(agent::ProviderKind::OpenAiChat));
        if (!o->baseUrl.empty())
            config.provider.baseUrl = o->baseUrl;
        config.provider.model = o->model;
        config.provider.localDevice = o->modelDevice;
        if (!o->apiKeyEnv.empty())
            config.provider.apiKeyEnv = o->apiKeyEnv;
        config.python = o->python;
        config.logprobs = o->logprobs || o->tokenIds;
        config.tokenIds = o->tokenIds;
        config.maxTokens = o->maxTokens;
        config.temperature = o->temperature;
        applyEvaluationProfile(config.evaluation, *evaluationProfileFrom(o->profile));
        config.evaluation.device = deviceChoiceFrom(o->device);
        const int code = runRollout(
            [&config](agent::RolloutRunner& runner, const agent::RolloutRunner::Observer& observer,
                      std::stop_token stop) { return runner.start(config, observer, stop); },
            o->store, o->json);
        if (code != kExitOk)
            throw CLI::RuntimeError(code);
    });

    auto store = std::make_shared<std::string>();
    auto* runs = app.add_subcommand("runs", "List rollout runs and show their metrics");
    runs->require_subcommand(1);
    runs->add_option("--store", *store, "Trajectory store (default: the state folder)");
    auto* listing = runs->add_subcommand("list", "Runs, newest first");
    // `kwb runs list --store X` as well as `kwb runs --store X list`, as `rollout resume` takes it.
    listing->fallthrough();
    listing->callback([store] {
        auto s = openStoreOrExit(*store);
        (void)agent::reconcileInterruptedRuns(*s, storePathOr(*store));
        for (const auto& r : orFail(s->listRuns()))
            std::cout << r.id << "\t" << r.status << "\t" << r.settings.value("model", "") << "\t"
                      << r.settings.value("episodes_per_task", 1) << " per task\t" << r.taskSet
                      << "\t" << r.createdAt << "\n";
    });
    auto* exporting = app.add_subcommand(
        "export", "A run's episodes for training: verl (RL prompts), verl-sft (multi-turn "
                  "messages with tools and loss masks), openrlhf (prompt, label and rollout rows), "
                  "rft (successful ones without loops or "
                  "invalid tool calls) or jsonl (for replay and import)");
    auto exportRunId = std::make_shared<agent::RunId>(0);
    auto format = std::make_shared<std::string>("jsonl");
    auto exportOut = std::make_shared<std::string>();
    auto minReward = std::make_shared<double>(1.0);
    auto exportStore = std::make_shared<std::string>();
    exporting->add_option("run", *exportRunId, "Run id")->required();
    exporting->add_option("--format", *format, "verl, verl-sft, openrlhf, rft or jsonl")
        ->check(CLI::IsMember({"verl", "verl-sft", "openrlhf", "rft", "jsonl"}));
    exporting->add_option("--out", *exportOut,
                          "Output file (default: standard output); a .parquet name writes parquet "
                          "through the task Python's pyarrow");
    exporting->add_option("--min-reward", *minReward, "rft: the least reward kept (1)");
    exporting->add_option("--store", *exportStore, "Trajectory store (default: the state folder)");
    exporting->callback([exportRunId, format, exportOut, minReward, exportStore] {
        auto opened = openStoreOrExit(*exportStore);
        agent::RunExportOptions options;
        options.format =
            agent::parseRunExportFormat(*format).value_or(agent::RunExportFormat::Jsonl);
        options.minReward = *minReward;
        // Parquet: the rows go to JSON lines beside the target first, then pyarrow writes them.
        const bool parquet = fs::path(*exportOut).extension() == ".parquet";
        const std::string target = parquet ? *exportOut + ".jsonl.part" : *exportOut;
        std::ofstream file;
        if (!target.empty()) {
            file.open(target, std::ios::binary | std::ios::trunc);
            if (!file)
                failCommand("cannot write " + target);
        }
        const std::size_t written = orFail(
            agent::exportRun(*opened, *exportRunId, options, target.empty() ? std::cout : file));
        file.close();
        if (parquet) {
            const PythonProbe python = locatePython("");
            const std::string error =
                python.path.empty() ? "writing parquet needs the task Python: " + python.error
                                    : writeParquetFromJsonLines(target, *exportOut, python.path);
            std::error_code ec;
            fs::remove(target, ec);
            if (!error.empty())
                failCommand(error);
        }
        std::cerr << "exported " << written << " row(s)\n";
    });

    auto* metrics = runs->add_subcommand("metrics", "The paper's metrics of one run, by level");
    metrics->fallthrough();
    auto run = std::make_shared<agent::RunId>(0);
    auto asJson = std::make_shared<bool>(false);
    metrics->add_option("run", *run, "Run id")->required();
    metrics->add_flag("--json", *asJson, "One JSON object: {\"overall\", \"by_level\"}");
    metrics->callback([store, run, asJson] {
        auto s = openStoreOrExit(*store);
        (void)agent::reconcileInterruptedRuns(*s, storePathOr(*store));
        orFail(s->loadRun(*run));
        agent::EpisodeFilter filter;
        filter.runId = *run;
        filter.limit = 0;
        printMetricsOf(std::cout, orFail(s->listEpisodes(filter)), *asJson);
    });
}

} // namespace kwb::cli
