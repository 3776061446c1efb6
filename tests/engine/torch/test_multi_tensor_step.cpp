// The trainer's multi-tensor optimiser step (engine/torch/multi_tensor_step) against libtorch's
// own clip_grad_norm_ and AdamW: the same numbers, step after step, in the same optimiser state.
#include "engine/torch/multi_tensor_step.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace kwb::torchnn {
namespace {

std::vector<torch::Tensor> parametersFrom(std::uint64_t seed) {
    torch::manual_seed(seed);
    return {torch::randn({4, 8}).set_requires_grad(true), torch::randn({8}).set_requires_grad(true),
            torch::randn({3, 2, 5}).set_requires_grad(true)};
}

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& parameters) {
    std::vector<torch::Tensor> out;
    for (const auto& p : parameters)
        out.push_back(p.detach().clone().set_requires_grad(true));
    return out;
}

// The same gradients on both sets; `skip` leaves one tensor without a gradient this step.
void setGradients(std::vector<torch::Tensor>& a, std::vector<torch::Tensor>& b, int step,
                  int skip = -1) {
    torch::manual_seed(100 + step);
    for (std::size_t i = 0; i < a.size(); ++i) {
        const torch::Tensor g = torch::randn(a[i].sizes()) * (step + 1);
        a[i].mutable_grad() = int(i) == skip ? torch::Tensor() : g.clone();
        b[i].mutable_grad() = int(i) == skip ? torch::Tensor() : g.clone();
    }
}

void expectSame(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-6, 1e-7)) << "tensor " << i;
}

TEST(MultiTensorStep, ClippingEqualsLibtorchsAndReturnsTheNormBeforeIt) {
    auto ours = parametersFrom(1);
    auto theirs = copies(ours);
    setGradients(ours, theirs, 3);
    const double expected = torch::nn::utils::clip_grad_norm_(theirs, 1.0);
    EXPECT_NEAR(clipGradientNorm(ours, 1.0), expected, 1e-5);
    ASSERT_GT(expected, 1.0) << "the gradients were large enough to clip";
    for (std::size_t i = 0; i < ours.size(); ++i)
        EXPECT_TRUE(torch::allclose(ours[i].grad(), theirs[i].grad(), 1e-6, 1e-7));
    // Below the limit nothing changes.
    const torch::Tensor before = ours[0].grad().clone();
    EXPECT_NEAR(clipGradientNorm(ours, 1e30), expected > 1.0 ? 1.0 : expected, 1e-5);
    EXPECT_TRUE(torch::allclose(ours[0].grad(), before, 1e-6, 1e-7));
}

TEST(MultiTensorStep, AdamwStepsEqualLibtorchsWithDecayChangingRatesAndMissingGradients) {
    auto ours = parametersFrom(2);
    auto theirs = copies(ours);
    const auto options = torch::optim::AdamWOptions(0.05).weight_decay(0.1).betas({0.8, 0.95});
    torch::optim::AdamW mine(ours, options), reference(theirs, options);
    for (int step = 0; step < 6; ++step) {
        const double rate = 0.05 * (step + 1) / 6.0; // a warm-up, as the trainer schedules it
        for (auto* optimiser : {&mine, &reference})
            for (auto& group : optimiser->param_groups())
                static_cast<torch::optim::AdamWOptions&>(group.options()).lr(rate);
        // Tensor 1 has no gradient in step 2: afterwards its step count lags the others'.
        setGradients(ours, theirs, step, step == 2 ? 1 : -1);
        adamwStep(mine);
        reference.step();
        expectSame(ours, theirs);
    }
    // The state is libtorch's own, so checkpoints hold the same thing.
    const auto& state = static_cast<const torch::optim::AdamWParamState&>(
        *mine.state().at(ours[1].unsafeGetTensorImpl()));
    EXPECT_EQ(state.step(), 5);
    const auto& other = static_cast<const torch::optim::AdamWParamState&>(
        *reference.state().at(theirs[1].unsafeGetTensorImpl()));
    EXPECT_TRUE(torch::allclose(state.exp_avg_sq(), other.exp_avg_sq(), 1e-6, 1e-9));
}

} // namespace
} // namespace kwb::torchnn
