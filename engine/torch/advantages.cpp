#include "engine/torch/advantages.h"

#include <map>
#include <torch/torch.h>
#include <vector>

namespace kwb::torchnn {

torch::Tensor maskedMean(const torch::Tensor& values, const torch::Tensor& mask) {
    const torch::Tensor m = mask.to(values.dtype());
    return (values * m).sum() / m.sum().clamp_min(1.0);
}

torch::Tensor maskedWhiten(const torch::Tensor& values, const torch::Tensor& mask, double epsilon) {
    const torch::Tensor m = mask.to(values.dtype());
    const torch::Tensor mean = maskedMean(values, m);
    const torch::Tensor variance = maskedMean((values - mean).pow(2), m);
    return (values - mean) * torch::rsqrt(variance + epsilon) * m;
}

AdvantageEstimate generalisedAdvantages(const torch::Tensor& rewards, const torch::Tensor& values,
                                        const torch::Tensor& mask, double gamma, double lambda) {
    TORCH_CHECK(rewards.dim() == 2 && rewards.sizes() == values.sizes() &&
                    rewards.sizes() == mask.sizes(),
                "rewards, values and mask must be [batch, length] alike");
    // A backward recursion over at most a few thousand tokens per row: on the CPU, in double.
    const torch::Tensor r = rewards.detach().to(torch::kCPU, torch::kFloat64).contiguous();
    const torch::Tensor v = values.detach().to(torch::kCPU, torch::kFloat64).contiguous();
    const torch::Tensor k = mask.detach().to(torch::kCPU, torch::kFloat64).contiguous();
    torch::Tensor advantages = torch::zeros_like(r);
    const auto R = r.accessor<double, 2>();
    const auto V = v.accessor<double, 2>();
    const auto K = k.accessor<double, 2>();
    auto A = advantages.accessor<double, 2>();
    const std::int64_t batch = r.size(0), length = r.size(1);
    for (std::int64_t b = 0; b < batch; ++b) {
        double nextValue = 0.0, nextAdvantage = 0.0, pendingReward = 0.0;
        for (std::int64_t t = length - 1; t >= 0; --t) {
            if (K[b][t] == 0.0) {
                pendingReward += R[b][t];
                continue;
            }
            const double reward = R[b][t] + pendingReward;
            pendingReward = 0.0;
            const double delta = reward + gamma * nextValue - V[b][t];
            A[b][t] = delta + gamma * lambda * nextAdvantage;
            nextAdvantage = A[b][t];
            nextValue = V[b][t];
        }
    }
    AdvantageEstimate out;
    out.advantages = advantages.to(values.device(), values.scalar_type());
    out.returns = (out.advantages + values.detach()) * mask.to(values.dtype());
    return out;
}

torch::Tensor groupRelativeAdvantages(const torch::Tensor& rewards, const torch::Tensor& groups,
                                      const torch::Tensor& mask, double epsilon) {
    TORCH_CHECK(rewards.dim() == 1 && groups.sizes() == rewards.sizes() && mask.dim() == 2 &&
                    mask.size(0) == rewards.size(0),
                "rewards and groups are [batch], the mask [batch, length]");
    const torch::Tensor r = rewards.detach().to(torch::kCPU, torch::kFloat64).contiguous();
    const torch::Tensor g = groups.to(torch::kCPU, torch::kInt64).contiguous();
    std::map<std::int64_t, std::vector<std::int64_t>> members;
    for (std::int64_t i = 0; i < r.size(0); ++i)
        members[g[i].item<std::int64_t>()].push_back(i);
    torch::Tensor scores = torch::zeros_like(r);
    for (const auto& [group, rows] : members) {
        if (rows.size() < 2)
            continue;
        const torch::Tensor index = torch::tensor(rows, torch::kInt64);
        const torch::Tensor member = r.index_select(0, index);
        // The sample standard deviation, as GRPO's reference implementation uses.
        const torch::Tensor normalised = (member - member.mean()) / (member.std() + epsilon);
        scores.index_copy_(0, index, normalised);
    }
    const torch::Tensor perToken = scores.to(mask.device(), rewards.scalar_type()).unsqueeze(1);
    return perToken * mask.to(rewards.dtype());
}

} // namespace kwb::torchnn
