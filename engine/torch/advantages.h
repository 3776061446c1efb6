#pragma once

#include <torch/types.h>

namespace kwb::torchnn {

// The mean of `values` over the positions where `mask` is 1 (the model's own tokens); 0 when
// the mask is empty rather than NaN, so an episode without model tokens adds nothing.
torch::Tensor maskedMean(const torch::Tensor& values, const torch::Tensor& mask);

// `values` shifted and scaled to mean 0 and variance 1 over the masked positions (PPO's
// advantage whitening); positions outside the mask become 0.
torch::Tensor maskedWhiten(const torch::Tensor& values, const torch::Tensor& mask,
                           double epsilon = 1e-8);

struct AdvantageEstimate {
    torch::Tensor advantages; // [batch, length], 0 outside the mask
    torch::Tensor returns;    // advantages + values: the critic's targets
};

// Generalised advantage estimation (Schulman et al. 2016) per token. rewards, values and mask
// are [batch, length]; mask marks the tokens the policy chose. Positions outside the mask (the
// prompt, tool output the environment wrote) are not steps of the policy: a token's successor
// is the next masked-in token, and a reward placed on an environment token counts for the
// policy token before it. After the last token the value is 0 (the episode ended).
// CUDA Agent's defaults: gamma 1, lambda 0.95.
AdvantageEstimate generalisedAdvantages(const torch::Tensor& rewards, const torch::Tensor& values,
                                        const torch::Tensor& mask, double gamma = 1.0,
                                        double lambda = 0.95);

// GRPO's advantage: each sequence's scalar reward less the mean of its group (the episodes of
// one task), divided by the group's standard deviation (+ epsilon), spread over its masked
// tokens. rewards and groups are [batch]; mask is [batch, length]. A group of one, or one whose
// rewards are all equal, gives 0 (nothing to prefer).
torch::Tensor groupRelativeAdvantages(const torch::Tensor& rewards, const torch::Tensor& groups,
                                      const torch::Tensor& mask, double epsilon = 1e-6);

} // namespace kwb::torchnn
