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

} // namespace kwb::agent
