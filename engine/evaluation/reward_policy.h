#pragma once

#include "engine/evaluation/evaluation_result.h"

namespace kwb {

// CUDA Agent's milestone reward: -1 failed (compile, verify, or a strict integrity flag),
// 1 correct, 2 faster than eager, 3 faster than eager and torch.compile. "Faster" means a
// speed-up above the threshold (1.05: more than 5% faster).
struct RewardPolicy {
    double speedupThreshold = 1.05;
    // Which of each variant's timed calls' statistics a speed-up compares: medians (robust to
    // the odd slow call: our default) or means (KernelBench's runtime is the mean of its
    // trials, so its profile compares means to agree with it).
    TimingStatistic statistic = TimingStatistic::Median;
    // A milestone counts only when the speed-up's interval (EvaluationResult::intervalVsEager,
    // intervalVsCompile) lies wholly above the threshold, and the profile stage times more rounds
    // while it straddles it: a kernel within noise of the threshold gets the same reward every
    // time instead of a coin flip. Off: the point estimate decides (KernelBench's way).
    bool decideOnInterval = true;
};

struct RewardDecision {
    int reward = -1;
    std::string reason;
};

RewardDecision decideReward(const EvaluationResult& result, const RewardPolicy& policy = {});

} // namespace kwb
