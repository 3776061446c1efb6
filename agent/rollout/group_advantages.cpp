#include "agent/rollout/group_advantages.h"

#include <cmath>
#include <map>

namespace kwb::agent {

std::vector<double> groupAdvantages(const std::vector<GroupSample>& samples) {
    struct Moments {
        double sum = 0.0;
        double squares = 0.0;
        int count = 0;
    };
    std::map<std::string, Moments> groups;
    for (const GroupSample& s : samples) {
        Moments& m = groups[s.group];
        m.sum += s.reward;
        m.squares += s.reward * s.reward;
        ++m.count;
    }
    std::vector<double> advantages;
    advantages.reserve(samples.size());
    for (const GroupSample& s : samples) {
        const Moments& m = groups[s.group];
        const double mean = m.sum / m.count;
        const double variance = std::max(0.0, m.squares / m.count - mean * mean);
        const double deviation = std::sqrt(variance);
        // Rewards are the milestones -1..3: anything below this is rounding, not a spread.
        advantages.push_back(deviation < 1e-9 ? 0.0 : (s.reward - mean) / deviation);
    }
    return advantages;
}

TurnReturns turnReturns(const std::vector<double>& rewards, const std::vector<double>& values,
                        double gamma, double lambda) {
    const std::size_t n = rewards.size();
    TurnReturns out{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
    auto value = [&](std::size_t t) { return t < values.size() ? values[t] : 0.0; };
    double future = 0.0, advantage = 0.0;
    for (std::size_t t = n; t-- > 0;) {
        future = rewards[t] + gamma * future;
        out.returns[t] = future;
        // The episode ends after its last turn: nothing follows to bootstrap from.
        const double next = t + 1 < n ? value(t + 1) : 0.0;
        const double delta = rewards[t] + gamma * next - value(t);
        advantage = delta + gamma * lambda * advantage;
        out.advantages[t] = advantage;
    }
    return out;
}

TurnReturns milestoneTurnReturns(std::size_t turns, double reward) {
    std::vector<double> rewards(turns, 0.0);
    if (!rewards.empty())
        rewards.back() = reward;
    return turnReturns(rewards);
}

} // namespace kwb::agent
