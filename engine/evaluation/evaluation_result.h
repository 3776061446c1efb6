#pragma once

#include "engine/diagnostics/diagnostic.h"
#include "engine/evaluation/integrity_evidence.h"

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kwb {

enum class StageStatus { NotRun, Passed, Failed, Skipped };
std::string toString(StageStatus status);

// One pipeline stage as it ran: how long, what it printed (already truncated), and why it failed.
struct StageRecord {
    std::string name; // static, workspace, inspect, compile, verify, profile, reward
    StageStatus status = StageStatus::NotRun;
    double seconds = 0.0; // wall-clock, as the engine saw it: from the stage's start to its result
    std::string summary;
    std::string log;
    // Run by a warm worker's standby child whose reference side was prepared before the
    // request came (the instant loop's path), as the worker reported it.
    bool preparedAhead = false;
    // Of `seconds`, what passed before the stage's own work began or after it ended: the
    // sandbox, the interpreter's start and exit, a warm worker's start, the request and result
    // files. The rest is the stage's time in its process.
    double startSeconds = 0.0;
    // A warm worker's server was started for this stage (its start is in startSeconds).
    bool workerStarted = false;
    // Of startSeconds, the wait for a GPU's lane (a timed stage under the evaluation service,
    // while another evaluation's timed stage held the GPU).
    double laneWaitSeconds = 0.0;
    // Of startSeconds, the wait for a build slot (a compile under the evaluation service, while
    // as many other builds as the cores allow ran).
    double buildWaitSeconds = 0.0;
    // Of the stage's time in its process, the wait for its GPU's lane alone when it reached its
    // timed calls (a timing stage of a warm worker; it started with the lane shared).
    double aloneLaneWaitSeconds = 0.0;
    // Of startSeconds, the wait for a warm worker's standby child to finish the preparation it
    // began when the last evaluation ended (an edit that follows the last result at once).
    double preparationWaitSeconds = 0.0;
};

// Where a speed-up lies with the confidence `level` (the profile stage's bootstrap over timing
// rounds); a milestone counts only when the whole interval is above its threshold.
struct SpeedupInterval {
    bool available = false;
    double low = 0.0;
    double high = 0.0;
};

struct OutputError {
    int index = 0;
    double maxAbsError = 0.0;
    double maxRelError = 0.0;
    std::vector<std::int64_t> shape;
    std::string dtype;
};

struct TimingStats {
    bool available = false;
    std::string unavailableReason;
    double medianMs = 0, meanMs = 0, minMs = 0, maxMs = 0, stdevMs = 0, p10Ms = 0, p90Ms = 0;
    int samples = 0;
    std::string method; // "cuda-events" or "wall-clock"
    double hostMedianMs = 0;
    double cv = 0;                      // coefficient of variation of single calls (stdev / mean)
    double roundCv = 0;                 // coefficient of variation of the per-round medians
    int rounds = 0;                     // rounds run (repeat-until-stable)
    bool stable = false;                // roundCv within the target
    std::vector<double> roundMediansMs; // one median per round: what speed-up intervals resample
    // Eager and torch.compile, which the judge times in its own thread: how long that thread
    // waited for a CPU over the kept rounds, how many rounds it timed again because of such a
    // wait, and whether a kept round still waited too long (kwb_harness/timing/busy_host.py).
    double hostWaitMs = 0;
    int roundsRetimed = 0;
    bool hostDisturbed = false;

    double spreadPercent() const { return medianMs > 0 ? 100.0 * stdevMs / medianMs : 0.0; }
};

// The statistic of a variant's timed calls that speed-ups compare.
enum class TimingStatistic { Median, Mean };
std::string toString(TimingStatistic statistic); // "median", "mean"
std::optional<TimingStatistic> timingStatisticFrom(const std::string& name);
double statisticOf(const TimingStats& stats, TimingStatistic statistic);

enum class FlagSeverity { Info, Warning, Strict };
std::string toString(FlagSeverity severity);

// An integrity finding. Strict flags make the reward -1; warnings are shown, not punished.
struct IntegrityFlag {
    std::string code; // e.g. "protected_file_modified", "sandbox_weak"
    FlagSeverity severity = FlagSeverity::Warning;
    std::string reason;
};

struct EnvironmentInfo {
    std::string device; // "cuda" or "cpu"
    std::string deviceName;
    std::string driverVersion;
    std::string cudaVersion;
    std::string torchVersion;
    std::string pythonVersion;
    std::string pythonPath;
};

// Everything one evaluation established, as an immutable value. The GUI, the CLI, the agent and
// the RL runner all read this record and nothing else; it round-trips through JSON.
struct EvaluationResult {
    static constexpr int kFormatVersion = 1;
    int formatVersion = kFormatVersion;

    std::string workspace;
    std::string referencePath;
    std::string candidatePath;
    std::string startedAt;     // ISO 8601 UTC
    double totalSeconds = 0.0; // wall-clock of the whole evaluation
    std::uint64_t seed = 0;
    bool cpuMode = false;
    bool sandboxed = false;
    std::string sandbox; // which sandbox ran the stages: "bubblewrap (/usr/bin/bwrap)", ...

    std::vector<StageRecord> stages;
    bool compiled = false;
    bool correct = false;
    std::string failureKind; // first failure: "compile_error", "numerical_mismatch", ...
    std::string failureMessage;
    std::vector<Diagnostic> diagnostics;

    // The rules it was judged by: the profile's name ("cuda-agent", "kernelbench", "rl") and the
    // tolerances the checks used (dtypeTolerances: per output dtype, as atol and rtol both).
    std::string evaluationProfile;
    bool profileModified = false; // some of the profile's values were overridden
    double atol = 0.0;
    double rtol = 0.0;
    std::map<std::string, double> dtypeTolerances;
    TimingStatistic speedupStatistic = TimingStatistic::Median; // what the speed-ups compare

    int checksRun = 0;
    int checksPassed = 0;
    std::vector<OutputError> outputErrors;

    TimingStats eager;
    TimingStats compiledBaseline; // torch.compile
    TimingStats candidate;
    bool baselinesFromCache = false;
    // Eager's and torch.compile's time over the candidate's, by speedupStatistic; 0 when not
    // measured or unavailable.
    double speedupVsEager = 0.0;
    double speedupVsCompile = 0.0;
    double intervalLevel = 0.0; // e.g. 0.90 for the intervals below
    SpeedupInterval intervalVsEager;
    SpeedupInterval intervalVsCompile;

    int reward = -1;
    std::string rewardReason;
    // Why the reward is provisional (empty when it is not): a speed reward whose fallback
    // detection rests only on evidence from inside the candidate's process (CPU mode has no
    // kernel census), or that no kernel census or external clock confirmed. RL may train on it
    // only where the user chose to.
    std::string rewardProvisional;
    std::vector<IntegrityFlag> flags;
    IntegrityEvidence integrity;
    EnvironmentInfo environment;
    // The profile stage's CUPTI records (kwb-cupti/1 lines), when a timeline was collected.
    std::string timelineRecordPath;
    // Nsight Compute's report and its details and raw pages as CSV, when counters were
    // collected (EvaluationOptions::counters).
    std::string countersReportPath;
    std::string countersDetailsPath;
    std::string countersRawPath;

    const StageRecord* stage(const std::string& name) const;
    bool hasStrictFlag() const;
    // The task could not be judged on this machine (isTaskFailure, found by inspect before any
    // candidate code ran): no verdict about the candidate, so no reward for an agent's episode.
    bool taskFailed() const;
    std::string verdict() const; // "correct, 1.42x vs eager" / "compile failed: ..."
    // The stages' seconds together; totalSeconds less this is the engine's own time between
    // them (cache look-ups, the reward, clean-up).
    double stageSeconds() const;
};

nlohmann::json toJson(const EvaluationResult& result);
// Reads a record written by toJson; `error` explains a malformed or newer-format document.
bool fromJson(const nlohmann::json& json, EvaluationResult& result, std::string* error = nullptr);

nlohmann::json toJson(const TimingStats& stats);
TimingStats timingFromJson(const nlohmann::json& json);
// [low, high] as the record and the profile stage's result write it; not available otherwise.
SpeedupInterval intervalFromJson(const nlohmann::json& json);

// The record's parts share their JSON shape with the harness's stage results, so both are read
// by the same functions. Missing or mistyped fields give defaults, never an exception.
Diagnostic diagnosticFromJson(const nlohmann::json& json);
OutputError outputErrorFromJson(const nlohmann::json& json);
IntegrityFlag flagFromJson(const nlohmann::json& json);

} // namespace kwb
