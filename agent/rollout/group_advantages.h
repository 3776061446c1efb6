#pragma once

#include <string>
#include <vector>

namespace kwb::agent {

// One scored sample of a rollout group (the K episodes of one task).
struct GroupSample {
    std::string group; // the task's id
    double reward = 0.0;
};

// GRPO's group-normalised advantage of every sample, in input order: (reward - the group's mean)
// / the group's standard deviation (population, as GRPO computes it). A group whose rewards are
// all equal teaches nothing: its advantages are 0, never a division by zero.
std::vector<double> groupAdvantages(const std::vector<GroupSample>& samples);

// PPO's returns and generalized advantage estimates (GAE) over one episode's model turns, for
// the trainers that take them precomputed. `rewards` per turn (CUDA Agent: zero but the last,
// the milestone reward), `values` the critic's estimate per turn (empty: no critic yet, V = 0);
// gamma and lambda as CUDA Agent trained with (1 and 0.95).
struct TurnReturns {
    std::vector<double> returns;    // discounted reward-to-go from each turn
    std::vector<double> advantages; // GAE(gamma, lambda)
};
TurnReturns turnReturns(const std::vector<double>& rewards, const std::vector<double>& values = {},
                        double gamma = 1.0, double lambda = 0.95);
// turnReturns over `turns` model turns with CUDA Agent's per-turn rewards: zero on every turn but
// the last, which carries the episode's milestone reward; no critic yet (V = 0).
TurnReturns milestoneTurnReturns(std::size_t turns, double reward);

} // namespace kwb::agent
