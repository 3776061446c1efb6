#include "engine/evaluation/evaluation_comparison.h"

#include <algorithm>
#include <set>

namespace kwb {
namespace {

std::optional<double> deltaOf(double before, double now) {
    if (before <= 0.0 || now <= 0.0)
        return std::nullopt;
    return now - before;
}

std::set<std::string> codesOf(const kwb::EvaluationResult& result) {
    std::set<std::string> codes;
    for (const auto& flag : result.flags)
        codes.insert(flag.code);
    return codes;
}

} // namespace

EvaluationComparison compareEvaluations(const kwb::EvaluationResult& previous,
                                        const kwb::EvaluationResult& current) {
    EvaluationComparison c;
    c.rewardDelta = current.reward - previous.reward;
    c.speedupVsEagerDelta = deltaOf(previous.speedupVsEager, current.speedupVsEager);
    c.speedupVsCompileDelta = deltaOf(previous.speedupVsCompile, current.speedupVsCompile);
    const auto before = codesOf(previous);
    const auto now = codesOf(current);
    std::set_difference(now.begin(), now.end(), before.begin(), before.end(),
                        std::back_inserter(c.flagsAdded));
    std::set_difference(before.begin(), before.end(), now.begin(), now.end(),
                        std::back_inserter(c.flagsRemoved));
    return c;
}

} // namespace kwb
