#include "engine/evaluation/evaluation_profile.h"

#include "engine/evaluation/evaluator.h"

#include <algorithm>

namespace kwb {

std::string toString(EvaluationProfile profile) {
    switch (profile) {
    case EvaluationProfile::CudaAgent:
        return "cuda-agent";
    case EvaluationProfile::KernelBench:
        return "kernelbench";
    case EvaluationProfile::Rl:
        return "rl";
    }
    return "cuda-agent";
}

std::optional<EvaluationProfile> evaluationProfileFrom(const std::string& name) {
    for (EvaluationProfile profile :
         {EvaluationProfile::CudaAgent, EvaluationProfile::KernelBench, EvaluationProfile::Rl})
        if (toString(profile) == name)
            return profile;
    return std::nullopt;
}

void applyEvaluationProfile(EvaluationOptions& options, EvaluationProfile profile) {
    const EvaluationOptions defaults; // CUDA Agent's numbers are the options' own defaults
    options.evaluationProfile = profile;
    options.profileModified = false;
    options.checks = defaults.checks;
    options.atol = defaults.atol;
    options.rtol = defaults.rtol;
    options.dtypeTolerances.clear();
    options.warmup = defaults.warmup;
    options.iterations = defaults.iterations;
    options.rounds = defaults.rounds;
    options.targetCv = defaults.targetCv;
    options.maxRounds = defaults.maxRounds;
    options.timingBudget = defaults.timingBudget;
    options.l2Flush = defaults.l2Flush;
    options.reward.decideOnInterval = defaults.reward.decideOnInterval;
    options.reward.statistic = defaults.reward.statistic;
    options.warmWorker = defaults.warmWorker;
    options.standby = defaults.standby;
    options.profileFlagged = defaults.profileFlagged;
    options.sealedCensus = defaults.sealedCensus;
    switch (profile) {
    case EvaluationProfile::CudaAgent:
        break;
    case EvaluationProfile::KernelBench:
        // Outputs of another dtype (integers, float64) keep the options' atol and rtol.
        options.dtypeTolerances = {{"float32", 1e-4}, {"float16", 1e-2}, {"bfloat16", 1e-2}};
        options.checks = 5;
        options.warmup = 3;
        // One round of 100 calls per variant: KernelBench times its 100 trials back to back.
        options.iterations = 100;
        options.rounds = 1;
        options.maxRounds = 1;
        options.l2Flush = true;
        // KernelBench's runtime is the mean of its trials; one round has no interval to
        // decide on.
        options.reward.statistic = TimingStatistic::Mean;
        options.reward.decideOnInterval = false;
        // Batches of pairs: warm workers as in the rl profile (below), for the same reasons.
        options.warmWorker = true;
        options.standby = false;
        // KernelBench's timed trials record nothing: neither do these (EvaluationOptions).
        options.sealedCensus = false;
        break;
    case EvaluationProfile::Rl:
        options.checks = 3;
        options.iterations = 20;
        options.rounds = 3;
        options.maxRounds = 6;
        options.timingBudget = std::chrono::seconds(5);
        // Rollouts evaluate thousands of candidates: the stages run in warm workers (torch
        // imported once per worker, a fresh forked child per stage, inputs from a fresh seed
        // each time). No standby children: a rollout's next candidate is rarely this workspace's,
        // and each one would hold a CUDA context.
        options.warmWorker = true;
        options.standby = false;
        // A strict finding in verification ends the evaluation: its reward is -1 whatever the
        // timing, and RL finds hacks often.
        options.profileFlagged = false;
        break;
    }
}

EvaluationOptions rlEvaluationOptions() {
    EvaluationOptions options;
    applyEvaluationProfile(options, EvaluationProfile::Rl);
    return options;
}

void applyQuickFeedback(EvaluationOptions& options, QuickFeedbackKeeps keep) {
    if (!keep.checks)
        options.checks = std::min(options.checks, 3);
    if (!keep.maxRounds)
        options.maxRounds = std::min(options.maxRounds, 5);
    if (!keep.timingBudget)
        options.timingBudget = std::min(options.timingBudget, std::chrono::seconds(3));
    if (!keep.targetCv)
        options.targetCv = std::max(options.targetCv, 0.05);
    options.maxRounds = std::max(options.maxRounds, options.rounds);
    options.warmWorker = true;
    options.profileModified = true;
}

} // namespace kwb
