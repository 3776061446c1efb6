#include "engine/torch/policy_losses.h"

#include "engine/torch/advantages.h"

#include <torch/torch.h>

namespace kwb::torchnn {

PolicyLoss clippedPolicyLoss(const torch::Tensor& logprobs, const torch::Tensor& oldLogprobs,
                             const torch::Tensor& advantages, const torch::Tensor& mask,
                             const PolicyLossOptions& options,
                             const torch::Tensor& referenceLogprobs, const torch::Tensor& entropy) {
    TORCH_CHECK(logprobs.sizes() == oldLogprobs.sizes() && logprobs.sizes() == advantages.sizes() &&
                    logprobs.sizes() == mask.sizes(),
                "log-probabilities, advantages and mask must have one shape");
    const torch::Tensor m = mask.to(torch::kFloat32);
    const torch::Tensor newLp = logprobs.to(torch::kFloat32);
    const torch::Tensor oldLp = oldLogprobs.detach().to(torch::kFloat32);
    const torch::Tensor adv = advantages.detach().to(torch::kFloat32);
    const torch::Tensor logRatio = newLp - oldLp;
    const torch::Tensor ratio = logRatio.exp();
    const torch::Tensor clipped = ratio.clamp(1.0 - options.clipLow, 1.0 + options.clipHigh);
    const torch::Tensor unclippedObjective = ratio * adv;
    const torch::Tensor clippedObjective = clipped * adv;
    PolicyLoss out;
    out.loss = -maskedMean(torch::min(unclippedObjective, clippedObjective), m);
    {
        torch::NoGradGuard noGrad;
        // Clipped where the clipped objective is the one taken and it differs.
        const torch::Tensor wasClipped =
            (clippedObjective < unclippedObjective).to(torch::kFloat32);
        out.clipFraction = maskedMean(wasClipped, m).item<double>();
        out.meanRatio = maskedMean(ratio, m).item<double>();
        out.approximateKl = maskedMean((ratio - 1.0) - logRatio, m).item<double>();
    }
    if (options.klCoefficient != 0.0) {
        TORCH_CHECK(referenceLogprobs.defined(), "a KL term needs the reference log-probabilities");
        const torch::Tensor towardsReference =
            referenceLogprobs.detach().to(torch::kFloat32) - newLp;
        const torch::Tensor kl = towardsReference.exp() - towardsReference - 1.0;
        const torch::Tensor meanKl = maskedMean(kl, m);
        out.loss = out.loss + options.klCoefficient * meanKl;
        out.referenceKl = meanKl.detach().item<double>();
    }
    if (entropy.defined()) {
        const torch::Tensor meanEntropy = maskedMean(entropy.to(torch::kFloat32), m);
        out.entropy = meanEntropy.detach().item<double>();
        if (options.entropyCoefficient != 0.0)
            out.loss = out.loss - options.entropyCoefficient * meanEntropy;
    }
    return out;
}

torch::Tensor clippedValueLoss(const torch::Tensor& values, const torch::Tensor& oldValues,
                               const torch::Tensor& returns, const torch::Tensor& mask,
                               double clip) {
    const torch::Tensor v = values.to(torch::kFloat32);
    const torch::Tensor target = returns.detach().to(torch::kFloat32);
    const torch::Tensor unclipped = (v - target).pow(2);
    if (clip <= 0.0)
        return 0.5 * maskedMean(unclipped, mask);
    const torch::Tensor old = oldValues.detach().to(torch::kFloat32);
    const torch::Tensor kept = old + (v - old).clamp(-clip, clip);
    return 0.5 * maskedMean(torch::max(unclipped, (kept - target).pow(2)), mask);
}

TokenLogprobs tokenLogprobs(const torch::Tensor& logits, const torch::Tensor& tokens,
                            bool entropyGradient) {
    const torch::Tensor logSoftmax = logits.to(torch::kFloat32).log_softmax(-1);
    TokenLogprobs out;
    out.logprobs = logSoftmax.gather(-1, tokens.to(torch::kInt64).unsqueeze(-1)).squeeze(-1);
    if (entropyGradient) {
        out.entropy = -(logSoftmax.exp() * logSoftmax).sum(-1);
    } else {
        // Without a graph, one vocabulary-wide temporary instead of two.
        torch::NoGradGuard noGrad;
        out.entropy = -logSoftmax.exp().mul_(logSoftmax).sum(-1);
    }
    return out;
}

} // namespace kwb::torchnn
