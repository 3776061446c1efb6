#include "agent/rollout/rollout_runner.h"

#include "agent/llm/known_secrets.h"
#include "agent/rollout/rollout_metrics.h"
#include "agent/rollout/run_advantages.h"
#include "agent/session/agent_session.h"
#include "engine/evaluation/evaluation_profile.h"
#include "engine/service/evaluation_service.h"
#include "engine/system/exclusive_file_lock.h"
#include "engine/system/python_environment.h"
#include "engine/tasks/parquet_task_rows.h"
#include "engine/tasks/task_set.h"
#include "engine/workspace/contained_files.h"

#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace kwb::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A task id as a relative file path: its folders kept ("level1/19_ReLU"), anything else that
// could leave the folder or confuse a shell replaced.
fs::path taskFileFor(const std::string& id) {
    fs::path out;
    std::string part;
    auto flush = [&] {
        if (!part.empty() && part != "." && part != "..")
            out /= part;
        part.clear();
    };
    for (char c : id) {
        if (c == '/') {
            flush();
            continue;
        }
        const bool plain =
            std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
        part.push_back(plain ? c : '_');
    }
    flush();
    if (out.empty())
        out = "task";
    out += ".py";
    return out;
}

struct Item {
    std::size_t task = 0;
    int sample = 0;
    int attempt = 0; // infrastructure errors so far
};

std::string itemKey(const std::string& task, int sample) {
    return task + "#" + std::to_string(sample);
}

// The run's task set; a parquet file is read as JSON lines that the task Python's pyarrow made
// (cached beside the store by the file's hash).
TaskSetLoad loadRunTaskSet(const RolloutConfig& config, const std::string& storePath) {
    TaskSetOptions options;
    options.limit = config.limit;
    if (fs::path(config.taskSetPath).extension() != ".parquet")
        return loadTaskSet(config.taskSetPath, options);
    const PythonProbe python = locatePython(config.python);
    if (python.path.empty()) {
        TaskSetLoad failed;
        failed.error = "reading a parquet task set needs the task Python: " + python.error;
        return failed;
    }
    const ParquetConversion converted = convertParquetTaskRows(
        config.taskSetPath, python.path,
        (fs::absolute(fs::path(storePath)).parent_path() / "task-sets").string());
    if (!converted.ok) {
        TaskSetLoad failed;
        failed.error = converted.error;
        return failed;
    }
    return loadTaskSet(converted.jsonlPath, options);
}

// Why a failed episode's task cannot be judged: its cause and the final evaluation's message
// (the evaluation that ended it).
std::string taskFailureReason(const EpisodeRecord& e) {
    std::string reason = e.endCause;
    if (e.finalEvaluation.is_object()) {
        const json failure = e.finalEvaluation.value("failure", json::object());
        const std::string message = failure.is_object() ? failure.value("message", "") : "";
        if (!message.empty())
            reason += ": " + message;
    }
    return reason;
}

} // namespace

std::uint64_t episodeSeed(std::uint64_t runSeed, const std::string& taskId, int sample) {
    // FNV-1a over the task id, then splitmix64's finaliser over the mix: std::hash may differ
    // between builds, and a run resumed by another build must draw the same seeds.
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char c : taskId)
        h = (h ^ c) * 0x100000001b3ULL;
    std::uint64_t z = runSeed ^ h ^ (static_cast<std::uint64_t>(sample) * 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

json rolloutSettingsToJson(const RolloutConfig& c) {
    json s = {{"limit", c.limit},
              {"seed", c.seed},
              {"episodes_per_task", c.episodesPerTask},
              {"concurrency", c.concurrency},
              {"max_turns", c.maxTurns},
              {"infrastructure_retries", c.infrastructureRetries},
              {"provider_kind", providerKindName(c.provider.kind)},
              // A key inside the URL is stored as a reference to its variable, never itself.
              {"base_url", withEnvironmentReferences(c.provider.effectiveBaseUrl())},
              {"model", c.provider.model},
              {"local_device", c.provider.localDevice},
              {"api_key_env", c.provider.apiKeyEnv},
              {"python", c.python},
              {"logprobs", c.logprobs},
              {"token_ids", c.tokenIds},
              {"evaluation_profile", toString(c.evaluation.evaluationProfile)},
              {"device", deviceChoiceName(c.evaluation.device)}};
    if (c.maxTokens)
        s["max_tokens"] = *c.maxTokens;
    if (c.temperature)
        s["temperature"] = *c.temperature;
    return s;
}

RolloutConfig rolloutSettingsFromJson(const json& s) {
    RolloutConfig c;
    if (!s.is_object())
        return c;
    c.limit = s.value("limit", std::size_t{0});
    // Runs stored before seeds were recorded: 0, and their episodes ask for none.
    c.seed =
        s.contains("seed") && s["seed"].is_number_unsigned() ? s["seed"].get<std::uint64_t>() : 0;
    c.episodesPerTask = s.value("episodes_per_task", 1);
    c.concurrency = s.value("concurrency", 1);
    c.maxTurns = s.value("max_turns", 200);
    c.infrastructureRetries = s.value("infrastructure_retries", 2);
    const auto kind = parseProviderKind(s.value("provider_kind", "openai"));
    c.provider = ProviderSettings::defaultsFor(kind.value_or(ProviderKind::OpenAiChat));
    c.provider.baseUrl = expandEnvironmentReferences(s.value("base_url", ""));
    c.provider.model = s.value("model", "");
    c.provider.localDevice = s.value("local_device", "auto");
    const std::string keyEnv = s.value("api_key_env", "");
    if (!keyEnv.empty())
        c.provider.apiKeyEnv = keyEnv;
    c.python = s.value("python", "");
    c.logprobs = s.value("logprobs", false);
    c.tokenIds = s.value("token_ids", false);
    if (s.contains("max_tokens") && s["max_tokens"].is_number_integer())
        c.maxTokens = s["max_tokens"].get<int>();
    if (s.contains("temperature") && s["temperature"].is_number())
        c.temperature = s["temperature"].get<double>();
    // Runs stored before profiles were recorded evaluated with the options' defaults.
    const auto profile = evaluationProfileFrom(s.value("evaluation_profile", "cuda-agent"));
    applyEvaluationProfile(c.evaluation, profile.value_or(EvaluationProfile::CudaAgent));
    c.evaluation.device = deviceChoiceFrom(s.value("device", "auto"));
    return c;
}

RolloutRunner::RolloutRunner(std::string storePath) : storePath_(std::move(storePath)) {}

RolloutOutcome RolloutRunner::start(const RolloutConfig& config, const Observer& observer,
                                    std::stop_token stop, RolloutControl* control) {
    RolloutOutcome out;
    if (config.episodesPerTask < 1 || config.concurrency < 1) {
        out.error = "episodes per task and concurrency must be at least 1";
        return out;
    }
    const TaskSetLoad set = loadRunTaskSet(config, storePath_);
    if (!set.ok) {
        out.error = set.error;
        return out;
    }
    auto opened = TrajectoryStore::open(storePath_);
    if (!opened) {
        out.error = opened.error().message;
        return out;
    }
    RolloutConfig seeded = config;
    while (seeded.seed == 0)
        seeded.seed = (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    RunRecord run;
    run.taskSet = fs::absolute(config.taskSetPath).string();
    run.taskSetHash = set.set.contentHash;
    run.settings = rolloutSettingsToJson(seeded);
    run.status = "running";
    auto created = opened.value()->createRun(run);
    if (!created) {
        out.error = created.error().message;
        return out;
    }
    opened.value().reset();
    return execute(created.value().id, seeded, set.set, observer, stop, control);
}

RolloutOutcome RolloutRunner::resume(RunId runId, const Observer& observer, std::stop_token stop,
                                     RolloutControl* control) {
    RolloutOutcome out;
    auto opened = TrajectoryStore::open(storePath_);
    if (!opened) {
        out.error = opened.error().message;
        return out;
    }
    auto loaded = opened.value()->loadRun(runId);
    if (!loaded) {
        out.error = loaded.error().message;
        return out;
    }
    RolloutConfig config = rolloutSettingsFromJson(loaded.value().settings);
    config.taskSetPath = loaded.value().taskSet;
    const TaskSetLoad set = loadRunTaskSet(config, storePath_);
    if (!set.ok) {
        out.error = set.error;
        return out;
    }
    if (!loaded.value().taskSetHash.empty() && loaded.value().taskSetHash != set.set.contentHash) {
        out.error = "the task set at " + config.taskSetPath +
                    " changed since the run was made (its content hash differs)";
        return out;
    }
    opened.value().reset();
    return execute(runId, config, set.set, observer, stop, control);
}

fs::path runDirectory(const std::string& storePath, RunId run) {
    const fs::path store = fs::absolute(fs::path(storePath));
    return store.parent_path() / "runs" / store.filename() / ("run-" + std::to_string(run));
}

int reconcileInterruptedRuns(TrajectoryStore& store, const std::string& storePath) {
    (void)store.closeAbandoned();
    auto runs = store.listRuns();
    if (!runs)
        return 0;
    int changed = 0;
    for (const auto& run : runs.value()) {
        if (run.status != "running")
            continue;
        const fs::path lockPath = runDirectory(storePath, run.id) / "run.lock";
        std::error_code ec;
        if (!fs::exists(lockPath, ec))
            continue; // recorded by another layout or host: nothing here says it is dead
        std::string error;
        bool heldByOther = false;
        // Taken and dropped at once: whoever executes the run holds it for as long as it lives.
        if (ExclusiveFileLock::tryAcquire(lockPath.string(), &error, &heldByOther) &&
            store.setRunStatus(run.id, "interrupted"))
            ++changed;
    }
    return changed;
}

RolloutOutcome RolloutRunner::execute(RunId runId, const RolloutConfig& config, const TaskSet& set,
                                      const Observer& observer, std::stop_token stop,
                                      RolloutControl* control) {
    RolloutOutcome out;
    out.run = runId;
    auto opened = TrajectoryStore::open(storePath_);
    if (!opened) {
        out.error = opened.error().message;
        return out;
    }
    TrajectoryStore& store = *opened.value();
    const fs::path runDir = runDirectory(storePath_, runId);
    std::error_code ec;
    fs::create_directories(runDir, ec);
    // One process at a time executes a run: two resuming it at once would both run its open
    // items, and each would take the other's episodes for abandoned ones.
    std::string lockError;
    const std::optional<ExclusiveFileLock> lock =
        ExclusiveFileLock::tryAcquire((runDir / "run.lock").string(), &lockError);
    if (!lock) {
        out.error =
            "run " + std::to_string(runId) + " is being executed by another process: " + lockError;
        return out;
    }
    (void)store.setRunStatus(runId, "running");
    // Episodes of this run whose process died (a killed rollout) are closed first: their items
    // run again.
    (void)store.closeAbandoned();

    // The task files the episodes read, written once per run beside the store.
    std::vector<fs::path> taskFiles;
    for (const TaskSetEntry& task : set.tasks) {
        const std::string relative = (fs::path("tasks") / taskFileFor(task.id)).string();
        taskFiles.push_back(runDir / relative);
        // A resumed run finds its files unchanged and leaves them.
        if (readFileInside(runDir, relative) == task.source)
            continue;
        std::string error;
        if (!writeFileInside(runDir, relative, task.source, &error)) {
            out.error = "cannot write " + taskFiles.back().string() + ": " + error;
            return out;
        }
    }

    // What is settled already, and how often each open item failed for infrastructure.
    auto episodes = store.listEpisodes(EpisodeFilter::everyEpisodeOf(runId));
    if (!episodes) {
        out.error = episodes.error().message;
        return out;
    }
    std::map<std::string, bool> settled;
    std::map<std::string, int> infrastructureFailures;
    std::map<std::string, std::string> failedTasks; // task id -> why it cannot be judged
    for (const EpisodeRecord& e : episodes.value()) {
        const std::string task = e.settings.value("run_task", "");
        const std::string key = itemKey(task, e.settings.value("run_sample", -1));
        if (isScoredOutcome(e.status, e.endCause))
            settled[key] = true;
        else if (usesUpARetry(e.status, e.endCause))
            ++infrastructureFailures[key];
        else if (e.status == EpisodeStatus::Failed && !failedTasks.count(task))
            failedTasks[task] = taskFailureReason(e);
    }
    // Every group's values again: a run recorded before they were stored, or killed between an
    // episode's end and its group's update, has them from here on.
    if (auto stored = storeRunAdvantages(store, runId, config.episodesPerTask); !stored)
        out.error = stored.error().message;
    std::deque<Item> queue;
    for (std::size_t t = 0; t < set.tasks.size(); ++t)
        for (int sample = 0; sample < config.episodesPerTask; ++sample) {
            ++out.planned;
            const std::string key = itemKey(set.tasks[t].id, sample);
            const int failures = infrastructureFailures[key];
            if (settled[key])
                ++out.done;
            else if (failedTasks.count(set.tasks[t].id))
                ++out.skipped;
            else if (failures > config.infrastructureRetries)
                ++out.gaveUp;
            else
                queue.push_back({t, sample, failures});
        }

    // One evaluation service for the run: warm workers and baselines shared, one timing lane.
    auto evaluations = std::make_shared<EvaluationService>(EvaluationServiceConfig{
        .python = config.python,
        .concurrentEvaluations = static_cast<unsigned>(config.concurrency)});
    auto progressOf = [&](EpisodeRecord last) {
        return RolloutProgress{runId,      out.planned, out.done,
                               out.gaveUp, out.skipped, std::move(last)};
    };
    if (observer)
        observer(progressOf({}));
    std::mutex mutex;
    auto worker = [&] {
        while (!stop.stop_requested()) {
            if (control && !control->waitWhilePaused(stop))
                return;
            Item item;
            {
                std::lock_guard lock(mutex);
                // A task found unjudgeable by an episode that ended meanwhile: its queued samples
                // are skipped, not run into the same failure.
                while (!queue.empty() && failedTasks.count(set.tasks[queue.front().task].id)) {
                    queue.pop_front();
                    ++out.skipped;
                }
                if (queue.empty())
                    return;
                item = queue.front();
                queue.pop_front();
            }
            const TaskSetEntry& task = set.tasks[item.task];
            AgentLaunch launch;
            launch.taskPath = taskFiles[item.task].string();
            launch.workspace = (runDir / "workspaces" /
                                (taskFileFor(task.id).replace_extension().string() + "-s" +
                                 std::to_string(item.sample) + "-a" + std::to_string(item.attempt)))
                                   .string();
            launch.storePath = storePath_;
            launch.provider = config.provider;
            launch.maxTurns = config.maxTurns;
            launch.python = config.python;
            launch.evaluation = config.evaluation;
            launch.evaluations = evaluations;
            launch.logprobs = config.logprobs;
            launch.tokenIds = config.tokenIds;
            launch.maxTokens = config.maxTokens;
            launch.temperature = config.temperature;
            // Every attempt of a sample draws the same seed: a retry after an infrastructure
            // failure is the same sample asked again.
            if (config.seed != 0)
                launch.seed = episodeSeed(config.seed, task.id, item.sample);
            launch.extraSettings = {{"run_id", runId},
                                    {"run_task", task.id},
                                    {"run_sample", item.sample},
                                    {"run_attempt", item.attempt},
                                    {"task_level", task.level}};
            auto steering = std::make_shared<SteeringController>();
            // A stopped run gives its running episodes up (cancelled): on resume their samples
            // start afresh in a clean workspace.
            std::stop_callback onStop(stop, [&steering] { steering->cancel(); });
            const RolloutControl::Attachment attached(control, steering);
            std::error_code ec;
            fs::remove_all(launch.workspace, ec); // an attempt's leftovers from a killed run
            AgentSession::Prepared prepared = AgentSession::prepare(launch, steering);
            EpisodeRunResult result;
            if (prepared)
                result = prepared.session->run(nullptr);
            std::lock_guard lock(mutex);
            if (!prepared || result.id == 0) {
                // No episode could be made (the store, the workspace): nothing to retry safely.
                ++out.gaveUp;
                if (out.error.empty())
                    out.error = prepared ? result.message : prepared.error;
                continue;
            }
            auto record = store.loadEpisode(result.id);
            if (isScoredOutcome(result.status, result.cause)) {
                ++out.done;
                // The task's group gained a sample: its advantages change, all of them.
                if (auto stored = storeRunAdvantages(store, runId, config.episodesPerTask, task.id);
                    !stored && out.error.empty())
                    out.error = stored.error().message;
            } else if (result.status == EpisodeStatus::InfrastructureError) {
                if (item.attempt < config.infrastructureRetries)
                    queue.push_back({item.task, item.sample, item.attempt + 1});
                else
                    ++out.gaveUp;
            } else if (result.status == EpisodeStatus::Failed) {
                ++out.skipped;
                if (!failedTasks.count(task.id))
                    failedTasks[task.id] =
                        record ? taskFailureReason(record.value()) : result.cause;
            }
            if (observer)
                observer(progressOf(record ? record.value() : EpisodeRecord{}));
        }
    };
    {
        std::vector<std::jthread> workers;
        for (int i = 0; i < std::max(1, config.concurrency); ++i)
            workers.emplace_back(worker);
    }
    for (const auto& [task, reason] : failedTasks)
        out.skippedTasks.push_back({task, reason});
    out.status = stop.stop_requested() ? "stopped" : "finished";
    (void)store.setRunStatus(runId, out.status);
    return out;
}

} // namespace kwb::agent
