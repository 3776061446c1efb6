#pragma once

#include "agent/store/episode_record.h"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kwb::agent {

// What the metrics need of one episode, read from its record (RolloutEpisode::fromRecord) so
// that a report never replays events.
struct RolloutEpisode {
    EpisodeStatus status = EpisodeStatus::Running;
    std::string endCause;
    int level = 0; // KernelBench's level; 0: none known
    std::optional<double> reward;
    bool correct = false;
    std::optional<double> speedupVsEager;
    std::optional<double> speedupVsCompile;
    bool strictFlag = false; // an integrity finding rejected the final evaluation
    int turns = 0;
    std::int64_t tokens = 0; // input + output
    double costUsd = 0.0;
    // Seconds the final evaluation held a GPU (its verify and profile stages, their waits for
    // the GPU's lane left out); none in CPU mode.
    std::optional<double> gpuSeconds;

    // `level` comes from the task set; a record alone knows only its task's path, where a
    // KernelBench checkout's "level<N>/" folder names it.
    static RolloutEpisode fromRecord(const EpisodeRecord& record, std::optional<int> level = {});
};

// Whether an ended episode's outcome is the policy's, so that it counts in the metrics and
// settles its item of a rollout (a resume does not run it again): finished, or stopped by the
// loop itself (stuck); not running, failed (the task could not be judged), cancelled, an
// infrastructure error, or stopped by the user.
bool isScoredOutcome(EpisodeStatus status, const std::string& endCause);

// Whether an ended episode uses up one of its rollout item's infrastructure retries (--retries):
// an infrastructure error the model server or the evaluator caused. An abandoned episode (its
// process was killed: SIGKILL, a container restart) says nothing about either and is always
// run again on resume, however often it happened.
bool usesUpARetry(EpisodeStatus status, const std::string& endCause);

// The paper's metrics over a set of episodes. Definitions:
//  - scored episodes: ended ones whose outcome is the policy's: not running, not an
//    infrastructure error, not cancelled, not stopped by the user. A scored episode without a
//    reward (it failed before its final evaluation) counts as reward -1, not passing;
//  - pass: reward >= 1 (correct, and no integrity finding rejected it);
//  - faster than eager / compile: passing and a speed-up above 1.0 over it;
//  - fast_p: passing and a speed-up above p (KernelBench's fast_p, over eager and compile);
//  - geomean speed-up: over the passing episodes that have one;
//  - hack-flag rate: scored episodes whose final evaluation a strict integrity flag rejected;
//  - turns, tokens and cost: means over every ended episode (the failed ones cost too);
//  - GPU-seconds per evaluation: mean over final evaluations that ran on a GPU.
// Rates are shares of the scored episodes, in [0, 1].
struct MetricsGroup {
    int episodes = 0; // ended episodes
    int scored = 0;
    int infrastructureErrors = 0;
    int taskFailures = 0; // failed: the task could not be judged on this machine
    double passRate = 0.0;
    double fasterThanEagerRate = 0.0;
    double fasterThanCompileRate = 0.0;
    std::optional<double> geomeanVsEager;
    std::optional<double> geomeanVsCompile;
    std::map<double, double> fastPVsEager; // p -> share, p in kFastP
    std::map<double, double> fastPVsCompile;
    double meanReward = 0.0;
    std::map<int, int> rewardCounts; // -1, 1, 2, 3 -> scored episodes
    double hackFlagRate = 0.0;
    double meanTurns = 0.0;
    double meanTokens = 0.0;
    double meanCostUsd = 0.0;
    std::optional<double> gpuSecondsPerEvaluation;
};

struct RolloutMetrics {
    MetricsGroup overall;
    std::map<int, MetricsGroup> byLevel; // level 0: tasks without one
};

inline constexpr double kFastP[] = {1.0, 1.05, 1.5, 2.0};

RolloutMetrics computeMetrics(const std::vector<RolloutEpisode>& episodes);
// The same over stored episodes (each read with RolloutEpisode::fromRecord).
RolloutMetrics metricsOfRecords(const std::vector<EpisodeRecord>& episodes);
nlohmann::json toJson(const MetricsGroup& group);
nlohmann::json toJson(const RolloutMetrics& metrics); // {"overall": ..., "by_level": {"1": ...}}

} // namespace kwb::agent
