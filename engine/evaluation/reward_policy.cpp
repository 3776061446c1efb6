#include "engine/evaluation/reward_policy.h"

#include <cstdio>

namespace kwb {
namespace {
std::string ratio(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3fx", value);
    return buffer;
}
} // namespace

RewardDecision decideReward(const EvaluationResult& r, const RewardPolicy& policy) {
    for (const auto& flag : r.flags)
        if (flag.severity == FlagSeverity::Strict)
            return {-1, "integrity flag " + flag.code + ": " + flag.reason};
    if (!r.compiled)
        return {-1, "did not compile" +
                        (r.failureMessage.empty() ? std::string() : ": " + r.failureMessage)};
    if (!r.correct && r.stage("verify") && r.stage("verify")->status == StageStatus::Skipped)
        return {-1, "compiled; not verified (compile only)"};
    if (!r.correct)
        return {-1, "not correct" +
                        (r.failureMessage.empty() ? std::string() : ": " + r.failureMessage)};
    if (!r.candidate.available || r.speedupVsEager <= 0)
        return {1, "correct; not profiled"};
    const std::string threshold = ratio(policy.speedupThreshold);
    if (r.speedupVsEager <= policy.speedupThreshold)
        return {1, "correct; " + ratio(r.speedupVsEager) + " vs eager is not above " + threshold};
    if (!r.compiledBaseline.available)
        return {2, "faster than eager (" + ratio(r.speedupVsEager) +
                       "); torch.compile unavailable: " + r.compiledBaseline.unavailableReason};
    if (r.speedupVsCompile <= policy.speedupThreshold)
        return {2, "faster than eager (" + ratio(r.speedupVsEager) + "), " +
                       ratio(r.speedupVsCompile) + " vs torch.compile is not above " + threshold};
    return {3, "faster than eager (" + ratio(r.speedupVsEager) + ") and torch.compile (" +
                   ratio(r.speedupVsCompile) + ")"};
}

} // namespace kwb
