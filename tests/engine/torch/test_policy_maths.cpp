// The reinforcement-learning maths of local training against values worked out by hand: GAE over
// model tokens with environment tokens between them, GRPO's group scores, the asymmetric PPO
// clip, the value clip, the KL estimate, LoRA's forward and merge; then one PPO update on a
// three-armed bandit moves the policy toward the rewarded arm.
#include "engine/torch/advantages.h"
#include "engine/torch/lora_linear.h"
#include "engine/torch/policy_losses.h"

#include <cmath>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace kwb::torchnn {
namespace {

torch::Tensor row(std::initializer_list<double> values) {
    return torch::tensor(std::vector<double>(values), torch::kFloat32).view({1, -1});
}

void expectNear(const torch::Tensor& actual, std::initializer_list<double> expected,
                double tolerance = 1e-5) {
    const torch::Tensor flat = actual.detach().to(torch::kFloat64).reshape({-1});
    ASSERT_EQ(flat.numel(), static_cast<std::int64_t>(expected.size()));
    std::size_t i = 0;
    for (double value : expected)
        EXPECT_NEAR(flat[i++].item<double>(), value, tolerance) << "element " << i - 1;
}

TEST(Advantages, GaeByHandWithGammaOneAndLambdaPointNineFive) {
    // delta2 = 1 - 0.7 = 0.3; delta1 = 0.7 - 0.6 = 0.1; delta0 = 0.6 - 0.5 = 0.1.
    // A2 = 0.3; A1 = 0.1 + 0.95 * 0.3 = 0.385; A0 = 0.1 + 0.95 * 0.385 = 0.46575.
    const auto estimate =
        generalisedAdvantages(row({0, 0, 1}), row({0.5, 0.6, 0.7}), row({1, 1, 1}), 1.0, 0.95);
    expectNear(estimate.advantages, {0.46575, 0.385, 0.3});
    expectNear(estimate.returns, {0.96575, 0.985, 1.0});
}

TEST(Advantages, EnvironmentTokensAreSkippedAndTheirRewardGoesToThePolicyTokenBefore) {
    // Tokens: policy, tool output (masked, reward 0.5 placed there), policy. The policy's steps
    // are positions 0 and 2: delta2 = 1 - 0.7 = 0.3; position 0 gets the tool token's reward
    // and sees position 2's value: delta0 = 0.5 + 0.9 * 0.7 - 0.5 = 0.63;
    // A0 = 0.63 + 0.9 * 0.5 * 0.3 = 0.765.
    const auto estimate =
        generalisedAdvantages(row({0, 0.5, 1}), row({0.5, 9.0, 0.7}), row({1, 0, 1}), 0.9, 0.5);
    expectNear(estimate.advantages, {0.765, 0.0, 0.3});
    expectNear(estimate.returns, {1.265, 0.0, 1.0});
}

TEST(Advantages, MaskedMeanAndWhitening) {
    const torch::Tensor values = row({1, 2, 3, 100});
    const torch::Tensor mask = row({1, 1, 1, 0});
    EXPECT_NEAR(maskedMean(values, mask).item<double>(), 2.0, 1e-6);
    EXPECT_EQ(maskedMean(values, torch::zeros_like(mask)).item<double>(), 0.0);
    // Mean 2, population variance 2/3: (x - 2) / sqrt(2/3).
    const double s = std::sqrt(1.5);
    expectNear(maskedWhiten(values, mask), {-s, 0.0, s, 0.0});
}

TEST(Advantages, GroupRelativeScores) {
    // Group 0: rewards 1, 0, -1 (mean 0, sample std 1); group 1 holds one episode; group 2 two
    // equal rewards: neither has anything to prefer.
    const torch::Tensor rewards = torch::tensor({1.0, 0.0, -1.0, 5.0, 2.0, 2.0});
    const torch::Tensor groups = torch::tensor({0, 0, 0, 1, 2, 2});
    const torch::Tensor mask = torch::ones({6, 2});
    mask[1][1] = 0;
    const torch::Tensor advantages = groupRelativeAdvantages(rewards, groups, mask);
    expectNear(advantages, {1, 1, 0, 0, -1, -1, 0, 0, 0, 0, 0, 0}, 1e-5);
}

TEST(PolicyLoss, AsymmetricClipByHand) {
    // Ratios e^0.5 = 1.6487 (positive advantage 2: clipped to 1.28 -> 2.56), e^-0.5 = 0.6065
    // (positive advantage 1: unclipped, min(0.6065, 0.8) = 0.6065), 1.1 (negative advantage -1:
    // clip range holds 1.1, -1.1), masked token ignored.
    const torch::Tensor oldLp = row({-1.0, -1.0, -1.0, -1.0});
    const torch::Tensor newLp =
        row({-0.5, -1.5, -1.0 + std::log(1.1), 3.0}).clone().set_requires_grad(true);
    const torch::Tensor adv = row({2.0, 1.0, -1.0, 50.0});
    const torch::Tensor mask = row({1, 1, 1, 0});
    const PolicyLoss loss = clippedPolicyLoss(newLp, oldLp, adv, mask);
    const double expected = -(2.56 + std::exp(-0.5) - 1.1) / 3.0;
    EXPECT_NEAR(loss.loss.item<double>(), expected, 1e-5);
    EXPECT_NEAR(loss.clipFraction, 1.0 / 3.0, 1e-6);
    EXPECT_NEAR(loss.meanRatio, (std::exp(0.5) + std::exp(-0.5) + 1.1) / 3.0, 1e-5);
    // The clipped token passes no gradient; the others pass -ratio * A / 3.
    loss.loss.backward();
    expectNear(newLp.grad(), {0.0, -std::exp(-0.5) / 3.0, 1.1 / 3.0, 0.0});
}

TEST(PolicyLoss, KlToTheReferenceAndEntropyBonus) {
    const torch::Tensor lp = row({-1.0, -2.0});
    const torch::Tensor reference = row({-1.5, -2.0});
    const torch::Tensor entropy = row({0.7, 0.3});
    PolicyLossOptions options;
    options.klCoefficient = 0.1;
    options.entropyCoefficient = 0.01;
    const PolicyLoss loss =
        clippedPolicyLoss(lp, lp, row({0.0, 0.0}), row({1, 1}), options, reference, entropy);
    // k3 per token: e^-0.5 - (-0.5) - 1 = 0.10653; 0 for the second; mean 0.053265.
    const double kl = (std::exp(-0.5) + 0.5 - 1.0) / 2.0;
    EXPECT_NEAR(loss.referenceKl, kl, 1e-6);
    EXPECT_NEAR(loss.entropy, 0.5, 1e-6);
    EXPECT_NEAR(loss.loss.item<double>(), 0.1 * kl - 0.01 * 0.5, 1e-6);
    EXPECT_NEAR(loss.approximateKl, 0.0, 1e-7);
}

TEST(PolicyLoss, ValueClipTakesTheLargerError) {
    // Token 0: new 1.0, old 0.0, return 1.0: clipped value 0.2, errors 0 and 0.64 -> 0.64.
    // Token 1: new 0.1, old 0.0, return 1.0: within the clip, error 0.81.
    const torch::Tensor loss =
        clippedValueLoss(row({1.0, 0.1}), row({0.0, 0.0}), row({1.0, 1.0}), row({1, 1}), 0.2);
    EXPECT_NEAR(loss.item<double>(), 0.5 * (0.64 + 0.81) / 2.0, 1e-6);
    EXPECT_NEAR(
        clippedValueLoss(row({1.0, 0.1}), row({0.0, 0.0}), row({1.0, 1.0}), row({1, 1}), 0.0)
            .item<double>(),
        0.5 * 0.81 / 2.0, 1e-6);
}

TEST(PolicyLoss, TokenLogprobsAndEntropy) {
    // Two equal logits and one far below: log-probabilities near log 1/2, entropy near log 2.
    const torch::Tensor logits = torch::tensor({0.0, 0.0, -100.0}).view({1, 1, 3});
    const TokenLogprobs out = tokenLogprobs(logits, torch::tensor({1}).view({1, 1}));
    expectNear(out.logprobs, {std::log(0.5)});
    expectNear(out.entropy, {std::log(2.0)});
}

TEST(Lora, AFreshAdapterChangesNothingAndTheMergeEqualsTheForward) {
    const torch::Tensor weight = torch::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}).view({2, 3});
    LoraLinear lora(weight, 2, 4.0, 7);
    const torch::Tensor x = torch::tensor({1.0, -1.0, 0.5}).view({1, 3});
    expectNear(lora.forward(x), {1 - 2 + 1.5, 4 - 5 + 3});
    // Set the adapter by hand: A = [[1, 0, 0], [0, 1, 0]], B = [[1, 0], [0, 2]], scale 4 / 2 = 2:
    // the update is 2 * B A = [[2, 0, 0], [0, 4, 0]].
    {
        torch::NoGradGuard noGrad;
        auto parameters = lora.parameters();
        parameters[0].copy_(torch::tensor({1.0, 0.0, 0.0, 0.0, 1.0, 0.0}).view({2, 3}));
        parameters[1].copy_(torch::tensor({1.0, 0.0, 0.0, 2.0}).view({2, 2}));
    }
    expectNear(lora.merged(), {3, 2, 3, 4, 9, 6});
    // The base gives 0.5 and 2; the update adds 2 * 1 and 4 * -1.
    expectNear(lora.forward(x), {0.5 + 2.0, 2.0 - 4.0});
    expectNear(torch::linear(x, lora.merged()), {2.5, -2.0});
    // Only the adapter learns.
    lora.forward(x).sum().backward();
    EXPECT_FALSE(lora.weight().requires_grad());
    EXPECT_TRUE(lora.parameters()[0].grad().defined());
    EXPECT_TRUE(lora.parameters()[1].grad().defined());
}

TEST(Lora, TheMergedForwardFollowsEveryChangeOfTheAdapter) {
    // Generation runs the merged weight: the adapter as it is now, never a stale one.
    const torch::Tensor weight =
        torch::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}).view({2, 3}).to(torch::kBFloat16);
    LoraLinear lora(weight, 2, 4.0, 7);
    const torch::Tensor x = torch::tensor({1.0, -1.0, 0.5}).view({1, 3}).to(torch::kBFloat16);
    const auto merged = [&] {
        const torch::Tensor y = lora.forwardMerged(x);
        EXPECT_FALSE(y.requires_grad());
        EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
        return y.to(torch::kFloat32);
    };
    expectNear(merged(), {0.5, 2.0});
    auto parameters = lora.parameters();
    {
        torch::NoGradGuard noGrad;
        parameters[0].copy_(torch::tensor({1.0, 0.0, 0.0, 0.0, 1.0, 0.0}).view({2, 3}));
        parameters[1].copy_(torch::tensor({1.0, 0.0, 0.0, 2.0}).view({2, 2}));
    }
    expectNear(merged(), {2.5, -2.0});
    // An optimiser's in-place step: B's second row halves, so the update adds 2 * -1 instead.
    torch::optim::SGD sgd(parameters, torch::optim::SGDOptions(1.0));
    parameters[1].mutable_grad() = torch::tensor({0.0, 0.0, 0.0, 1.0}).reshape({2, 2}).clone();
    // libtorch's SGD updates in place without bumping the version, so its owner says so.
    sgd.step();
    lora.adapterChanged();
    expectNear(merged(), {2.5, 0.0});
    // The trained path gives the same numbers, and gradients reach the adapter.
    sgd.zero_grad();
    const torch::Tensor y = lora.forward(x);
    expectNear(y.to(torch::kFloat32), {2.5, 0.0});
    y.to(torch::kFloat32).sum().backward();
    EXPECT_TRUE(parameters[1].grad().defined());
}

TEST(Ppo, OneUpdateOnABanditMovesThePolicyTowardTheRewardedArm) {
    torch::manual_seed(3);
    torch::Tensor logits = torch::zeros({3}, torch::requires_grad());
    torch::optim::Adam optimiser({logits}, torch::optim::AdamOptions(0.1));
    const auto probabilityOfArm2 = [&] { return logits.softmax(0)[2].item<double>(); };
    const double before = probabilityOfArm2();
    // 64 one-token episodes drawn from the current policy; arm 2 pays 1, the others 0.
    const torch::Tensor arms = torch::multinomial(logits.detach().softmax(0), 64, true);
    const torch::Tensor rewards = (arms == 2).to(torch::kFloat32);
    const torch::Tensor mask = torch::ones({64, 1});
    const torch::Tensor advantages =
        groupRelativeAdvantages(rewards, torch::zeros({64}, torch::kInt64), mask);
    const torch::Tensor oldLp = logits.detach().log_softmax(0).index_select(0, arms).view({64, 1});
    for (int epoch = 0; epoch < 4; ++epoch) {
        const torch::Tensor lp = logits.log_softmax(0).index_select(0, arms).view({64, 1});
        const PolicyLoss loss = clippedPolicyLoss(lp, oldLp, advantages, mask);
        optimiser.zero_grad();
        loss.loss.backward();
        optimiser.step();
    }
    EXPECT_GT(probabilityOfArm2(), before + 0.05) << "from " << before;
    EXPECT_GT(probabilityOfArm2(), logits.softmax(0)[0].item<double>());
    EXPECT_GT(probabilityOfArm2(), logits.softmax(0)[1].item<double>());
}

} // namespace
} // namespace kwb::torchnn
