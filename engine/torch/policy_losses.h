#pragma once

#include <torch/types.h>

namespace kwb::torchnn {

// The PPO objective per token (CUDA Agent's recipe: an asymmetric clip, 0.2 below and 0.28
// above, so that rare good tokens can gain more than common ones lose).
struct PolicyLossOptions {
    double clipLow = 0.2;
    double clipHigh = 0.28;
    double klCoefficient = 0.0;      // against the frozen reference policy; 0: no KL term
    double entropyCoefficient = 0.0; // a bonus for entropy; 0: none
};

struct PolicyLoss {
    torch::Tensor loss; // scalar, differentiable in the new log-probabilities (and entropy)
    // What each step logs (detached): the share of tokens whose ratio was clipped, the mean
    // ratio, the approximate KL to the behaviour policy and to the reference, the entropy.
    double clipFraction = 0;
    double meanRatio = 0;
    double approximateKl = 0;
    double referenceKl = 0;
    double entropy = 0;
};

// All tensors are [batch, length]; mask marks the policy's tokens, and every mean is over them.
// `referenceLogprobs` and `entropy` may be undefined tensors when their coefficient is 0.
// The loss is  -min(ratio * A, clip(ratio, 1 - low, 1 + high) * A)
//              + klCoefficient * KL(new || reference) - entropyCoefficient * entropy,
// with KL estimated per token as exp(ref - new) - (ref - new) - 1 (Schulman's k3: unbiased and
// never negative).
PolicyLoss clippedPolicyLoss(const torch::Tensor& logprobs, const torch::Tensor& oldLogprobs,
                             const torch::Tensor& advantages, const torch::Tensor& mask,
                             const PolicyLossOptions& options = {},
                             const torch::Tensor& referenceLogprobs = {},
                             const torch::Tensor& entropy = {});

// The critic's loss: half the squared error to the returns, the larger of the unclipped and the
// clipped (values kept within `clip` of the values the rollout saw) per token; clip <= 0 turns
// the clipping off.
torch::Tensor clippedValueLoss(const torch::Tensor& values, const torch::Tensor& oldValues,
                               const torch::Tensor& returns, const torch::Tensor& mask,
                               double clip = 0.2);

// Log-probabilities of `tokens` ([batch, length], int64) under `logits` ([batch, length,
// vocabulary]), and each position's entropy; computed in float32 whatever the logits' type.
// The entropy takes part in the autograd graph only with `entropyGradient` (a loss with an
// entropy term): otherwise it is a reported figure, and its graph would keep the probabilities
// over the whole vocabulary alive through the backward pass (a float32 copy of the logits:
// 384 MiB for a GRPO step of 16 x 128 tokens of SmolLM2).
struct TokenLogprobs {
    torch::Tensor logprobs;
    torch::Tensor entropy;
};
TokenLogprobs tokenLogprobs(const torch::Tensor& logits, const torch::Tensor& tokens,
                            bool entropyGradient = false);

} // namespace kwb::torchnn
