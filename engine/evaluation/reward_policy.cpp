#include "engine/evaluation/reward_policy.h"

#include <cstdio>

namespace kwb {
namespace {
std::string ratio(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3fx", value);
    return buffer;
}

// Whether a speed-up clears the threshold, and how that was decided.
struct Cleared {
    bool above = false;
    std::string how; // "1.230x" or "1.070x (90% interval 1.020x-1.110x straddles 1.050x)"
};

Cleared clears(double speedup, const SpeedupInterval& interval, double level, int rounds,
               const RewardPolicy& policy) {
    Cleared c{speedup > policy.speedupThreshold, ratio(speedup)};
    if (!policy.decideOnInterval || rounds < 2)
        return c; // one round has no interval: the point estimate decides
    if (!interval.available) {
        // Rounds were timed but no interval came of them (a candidate's batch reported zero
        // times, say): the milestone is not shown, so it is not paid.
        if (c.above)
            c.how += " (no interval over the " + std::to_string(rounds) + " rounds: not counted)";
        c.above = false;
        return c;
    }
    char text[160];
    std::snprintf(text, sizeof text, " (%.0f%% interval %s-%s", 100.0 * level,
                  ratio(interval.low).c_str(), ratio(interval.high).c_str());
    c.how += text;
    if (c.above && interval.low <= policy.speedupThreshold) {
        c.above = false;
        c.how += " reaches below " + ratio(policy.speedupThreshold) + ": not counted";
    }
    c.how += ")";
    return c;
}
} // namespace

RewardDecision decideReward(const EvaluationResult& r, const RewardPolicy& policy) {
    for (const auto& flag : r.flags)
        if (flag.severity == FlagSeverity::Strict)
            return {-1, "integrity flag " + flag.code + ": " + flag.reason};
    // A cancelled evaluation was cut short: nothing it measured may be paid or trained on.
    if (r.failureKind == "cancelled")
        return {-1, r.failureMessage.empty() ? "cancelled" : r.failureMessage};
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
    const Cleared eager =
        clears(r.speedupVsEager, r.intervalVsEager, r.intervalLevel, r.candidate.rounds, policy);
    if (!eager.above)
        return {1, "correct; " + eager.how + " vs eager is not above " + threshold};
    if (!r.compiledBaseline.available)
        return {2, "faster than eager (" + eager.how +
                       "); torch.compile unavailable: " + r.compiledBaseline.unavailableReason};
    const Cleared compiled = clears(r.speedupVsCompile, r.intervalVsCompile, r.intervalLevel,
                                    r.candidate.rounds, policy);
    if (!compiled.above)
        return {2, "faster than eager (" + eager.how + "), " + compiled.how +
                       " vs torch.compile is not above " + threshold};
    return {3, "faster than eager (" + eager.how + ") and torch.compile (" + compiled.how + ")"};
}

} // namespace kwb
