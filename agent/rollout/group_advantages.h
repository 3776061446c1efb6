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

} // namespace kwb::agent
