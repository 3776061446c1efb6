#pragma once

#include "engine/tuning/tuning_scorer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace kwb {

// A samples.jsonl row's score as the run recorded it.
inline TuningScore tuningScoreFromRow(const nlohmann::json& row) {
    TuningScore s;
    s.measured = !row.contains("error");
    s.error = row.value("error", "");
    s.reward = row.value("reward", -1);
    s.correct = row.value("correct", false);
    s.speedupVsEager = row.value("speedup_vs_eager", 0.0);
    s.speedupVsCompile = row.value("speedup_vs_compile", 0.0);
    s.verdict = row.value("verdict", "");
    return s;
}

// Figures of a set of scored samples of a tuning run (a phase on a space, or a training step):
// what the run writes into steps.jsonl and summary.json, and what a view of a run computes
// again from samples.jsonl while the run goes.
struct SampleFigures {
    int samples = 0, correct = 0, fasterThanCompile = 0;
    double rewardSum = 0, trainingRewardSum = 0, logSpeedupSum = 0;
    std::map<std::string, int> actions;

    void add(const std::string& action, const TuningScore& s, double trainingReward) {
        ++samples;
        ++actions[action];
        rewardSum += s.reward;
        trainingRewardSum += trainingReward;
        if (s.correct) {
            ++correct;
            logSpeedupSum += std::log(std::max(s.speedupVsEager, 1e-6));
            fasterThanCompile += s.speedupVsCompile > 1.0 ? 1 : 0;
        }
    }
    double meanReward() const { return rewardSum / std::max(samples, 1); }
    double passRate() const { return static_cast<double>(correct) / std::max(samples, 1); }
    // The geometric mean over correct samples: speed-ups are ratios.
    double speedupVsEager() const { return correct ? std::exp(logSpeedupSum / correct) : 0.0; }
    double fasterThanCompileShare() const {
        return static_cast<double>(fasterThanCompile) / std::max(samples, 1);
    }

    nlohmann::json toJson() const {
        const double n = std::max(samples, 1);
        std::string best;
        int bestCount = 0;
        for (const auto& [action, count] : actions)
            if (count > bestCount)
                best = action, bestCount = count;
        return {{"samples", samples},
                {"mean_reward", meanReward()},
                {"mean_training_reward", trainingRewardSum / n},
                {"pass_rate", passRate()},
                {"speedup_vs_eager", speedupVsEager()},
                {"faster_than_compile", fasterThanCompileShare()},
                {"distinct_actions", actions.size()},
                {"most_sampled", best},
                {"most_sampled_share", bestCount / n}};
    }
};

} // namespace kwb
