#pragma once

#include "agent/store/episode_snapshot.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kwb::ui {

// One evaluation event of an episode, as the reward plot shows it.
struct EvaluationPoint {
    agent::EpisodeId episode = 0;
    std::int64_t sequence = 0; // the event's step number in the store
    int index = 0;             // 1, 2, 3, ...: the episode's n-th evaluation
    double reward = -1.0;
    double speedupVsEager = 0.0;   // 0: not measured
    double speedupVsCompile = 0.0; // 0: not measured
    bool correct = false;
    std::string trigger; // "Verify", "Profile", "final"
    std::string verdict;
};

std::vector<EvaluationPoint> evaluationPoints(const agent::EpisodeSnapshot& episode);

// What one group of evaluations adds up to. A pass is reward >= 1: correct and free of strict
// integrity flags (the reward policy's own line). The geometric mean is over the passes'
// speed-ups vs eager, the KernelBench convention; none when nothing passed with a timing.
struct RolloutAggregate {
    std::string label; // "3" for step 3, or a level name
    int evaluations = 0;
    double meanReward = 0.0;
    double passRate = 0.0;              // 0..1
    double fasterThanCompileRate = 0.0; // 0..1: passes with a speed-up vs torch.compile > 1
    std::optional<double> geomeanSpeedupVsEager;
};

// Episodes aggregated the way an RL rollout is read, over whatever set the user selected (a
// stored run's own metrics are agent::computeMetrics, shown in the Rollouts view).
struct RolloutMetrics {
    int episodes = 0;
    std::vector<RolloutAggregate> perStep;  // the n-th evaluation of every episode that has one
    std::vector<RolloutAggregate> perLevel; // each episode's last evaluation, by task level
};

RolloutAggregate aggregate(const std::vector<EvaluationPoint>& points, std::string label);
RolloutMetrics rolloutMetrics(const std::vector<agent::EpisodeSnapshotPtr>& episodes);

// The KernelBench level of the episode's task: settings["level"] when the runner recorded one,
// else a "level<N>" folder in the task path, else "unlabelled".
std::string taskLevel(const agent::EpisodeRecord& record);

} // namespace kwb::ui
