#pragma once

#include "agent/llm/provider_settings.h"
#include "agent/rollout/rollout_control.h"
#include "agent/store/trajectory_store.h"
#include "engine/evaluation/evaluation_profile.h"
#include "engine/evaluation/evaluator.h"
#include "engine/tasks/task_set.h"

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>

namespace kwb::agent {

// The seed of a run's sample `sample` of task `taskId` (stable across machines and builds).
std::uint64_t episodeSeed(std::uint64_t runSeed, const std::string& taskId, int sample);

// What a rollout runs: K agent episodes for every task of a task set, N at once.
struct RolloutConfig {
    std::string taskSetPath; // a KernelBench checkout, a folder of task files or Ops-6K JSONL
    std::size_t limit = 0;   // the first N tasks (0: all)
    int episodesPerTask = 1;
    int concurrency = 1;
    int maxTurns = 200;
    // An episode that ends in an infrastructure error (the model server, the evaluator) is run
    // again this many times; the failed attempts stay in the store, outside the scored metrics
    // (pass rate, speed-ups, rewards) but inside what the run spent (turns, tokens, cost per
    // episode).
    int infrastructureRetries = 2;
    ProviderSettings provider; // its key is read from the environment, never stored
    bool logprobs = false;     // keep the sampled tokens' log-probabilities (and ids)
    bool tokenIds = false;
    std::optional<int> maxTokens; // per reply; unset: the provider's default
    std::optional<double> temperature;
    // The run's seed: sample k of a task is episode seed episodeSeed(seed, task, k), so a
    // group's samples differ from each other and a run made again with the same seed draws
    // them again where the server honours seeds. 0 when a run is created: one is drawn, and
    // stored with the run, so a resumed run keeps it.
    std::uint64_t seed = 0;
    std::string python;
    // The rl profile's options unless the caller applies another (kwb rollout --profile); the
    // profile is stored with the run, so a resume evaluates by the same rules.
    EvaluationOptions evaluation = rlEvaluationOptions();
};

// What the observer hears once the run is open (before its first episode: `last.id` is 0) and
// after every episode.
struct RolloutProgress {
    RunId run = 0;
    int planned = 0; // tasks x episodes per task
    int done = 0;    // items with a scored episode (finished or failed)
    int gaveUp = 0;  // items whose every attempt was an infrastructure error
    int skipped = 0; // items of tasks that cannot be judged on this machine (SkippedTask)
    EpisodeRecord last;
};

// A task the run does not sample (further): an episode of it ended failed, because the task
// itself cannot be judged here (its inputs do not fit this machine's evaluation budget, its
// reference does not import or run). Its other samples would fail the same way.
struct SkippedTask {
    std::string task;   // the task set's id
    std::string reason; // the episode's cause and the evaluator's message
};

struct RolloutOutcome {
    RunId run = 0;
    std::string status; // "finished", "stopped"; empty with `error`
    int planned = 0;
    int done = 0;
    int gaveUp = 0;
    int skipped = 0; // items not run (or not run again) because their task failed
    std::vector<SkippedTask> skippedTasks;
    std::string error;
};

// Runs a rollout on the calling thread, its episodes on `concurrency` worker threads, each an
// AgentSession like `kwb agent` (one evaluation service shared by all). The run and its settings
// are recorded first; every episode carries run_id / run_task / run_sample from its creation, so
// resume() finds exactly what is done after any crash: an item (task, sample) is done once it
// has an episode whose outcome is the policy's (isScoredOutcome: finished, failed, or stopped as
// stuck), the same episodes the metrics count; episodes stopped by the user, cancelled (a
// stopped run cancels its running episodes), abandoned or ended in an infrastructure error are run
// again (the latter at most `infrastructureRetries` times). A failed episode (its task cannot be
// judged here) settles every sample of its task as skipped.
class RolloutRunner {
public:
    using Observer = std::function<void(const RolloutProgress&)>;

    explicit RolloutRunner(std::string storePath);

    // `control` (optional) pauses and resumes the run from another thread.
    RolloutOutcome start(const RolloutConfig& config, const Observer& observer,
                         std::stop_token stop, RolloutControl* control = nullptr);
    // Continues run `run` with the settings it was recorded with (the key from the environment).
    RolloutOutcome resume(RunId run, const Observer& observer, std::stop_token stop,
                          RolloutControl* control = nullptr);

private:
    RolloutOutcome execute(RunId run, const RolloutConfig& config, const TaskSet& set,
                           const Observer& observer, std::stop_token stop, RolloutControl* control);

    std::string storePath_;
};

// Where run `run` of the store at `storePath` keeps its lock, task snapshot and workspaces:
// beside the store, in a folder named after the store's file, so that two stores in one folder
// never share (or lock each other out of) their run 1.
std::filesystem::path runDirectory(const std::string& storePath, RunId run);

// Runs recorded as running whose executing process is gone (killed, crashed: nobody holds the
// run's lock) become "interrupted", and their episodes' dead owners are closed as abandoned, so
// that a store only read (runs list, metrics) tells the truth; `kwb rollout resume` continues
// them. Returns how many runs changed.
int reconcileInterruptedRuns(TrajectoryStore& store, const std::string& storePath);

nlohmann::json rolloutSettingsToJson(const RolloutConfig& config);
RolloutConfig rolloutSettingsFromJson(const nlohmann::json& settings);

} // namespace kwb::agent
