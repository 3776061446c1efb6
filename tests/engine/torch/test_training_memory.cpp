// What a training step keeps in memory, counted on the CPU: LoRA adapters that read one input
// share its float32 copy, and a step does not carry generation's merged weights through its
// peak. Both were found on a GPU (a GRPO step of SmolLM2 above transformers' peak); the bytes
// counted here are the same tensors at a size a test can run.
#include "engine/torch/llama_model.h"
#include "engine/torch/llama_network.h"
#include "engine/torch/lora_linear.h"
#include "engine/torch/policy_losses.h"
#include "engine/torch/policy_trainer.h"
#include "tests/engine/torch/counting_cpu_allocator.h"
#include "tests/engine/torch/sampled_episodes.h"
#include "tests/engine/torch/tiny_llama.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace kwb::torchnn {
namespace {

using testing::CountingCpuAllocator;

TEST(TrainingMemory, AdaptersReadingOneInputShareItsFloat32Copy) {
    CountingCpuAllocator::Installed counting;
    const auto bf16 = torch::TensorOptions().dtype(torch::kBFloat16);
    torch::manual_seed(3);
    const torch::Tensor x = torch::randn({64, 256}).to(bf16);
    constexpr std::int64_t kBytesOfCopy = 64 * 256 * 4;
    LoraLinear first(torch::randn({128, 256}).to(bf16), 4, 8.0, 1);
    LoraLinear second(torch::randn({128, 256}).to(bf16), 4, 8.0, 2);
    {
        // B starts at zero; a non-zero B makes every gradient depend on the path taken.
        torch::NoGradGuard noGrad;
        first.parameters()[1].fill_(0.01);
        second.parameters()[1].fill_(-0.02);
    }

    // What the autograd graphs of both products keep beyond their inputs, and A's gradients.
    const auto run = [&](bool shared) {
        const std::int64_t before = counting.current();
        const torch::Tensor x32 = shared ? x.to(torch::kFloat32) : torch::Tensor();
        const torch::Tensor y = first.forward(x, x32) + second.forward(x, x32);
        const std::int64_t kept = counting.current() - before;
        y.to(torch::kFloat32).sum().backward();
        std::vector<torch::Tensor> gradients;
        for (LoraLinear* adapter : {&first, &second}) {
            gradients.push_back(adapter->parameters()[0].grad().clone());
            adapter->parameters()[0].mutable_grad() = torch::Tensor();
            adapter->parameters()[1].mutable_grad() = torch::Tensor();
        }
        return std::make_pair(kept, gradients);
    };
    const auto [keptEach, gradientsEach] = run(false);
    const auto [keptShared, gradientsShared] = run(true);
    // One float32 copy of x (64 KiB) instead of two.
    EXPECT_LE(keptShared, keptEach - kBytesOfCopy * 9 / 10)
        << "kept " << keptShared << " bytes shared, " << keptEach << " each";
    for (std::size_t i = 0; i < 2; ++i)
        EXPECT_TRUE(torch::equal(gradientsShared[i], gradientsEach[i])) << "adapter " << i;
}

TEST(TrainingMemory, TheTrainedForwardInBfloat16EqualsTheMergedOne) {
    // The network in bfloat16 on the CPU, where q, k and v (and gate and up) share their input's
    // float32 copy: the trained forward pass gives the merged weights' output within bfloat16's
    // rounding, and every adapter gets a gradient.
    auto network = LlamaNetwork::randomlyInitialised(tiny::tinyConfig(), 7,
                                                     torch::Device(torch::kCPU), torch::kBFloat16,
                                                     /*std=*/0.3);
    std::string error;
    const auto parameters = network->attachLora(
        4, 8.0, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}, 1,
        error);
    ASSERT_EQ(error, "");
    {
        torch::NoGradGuard noGrad;
        for (std::size_t i = 1; i < parameters.size(); i += 2)
            parameters[i].fill_(0.05); // every B non-zero: the adapters change the output
    }
    const torch::Tensor ids = torch::tensor({{1, 5, 2, 7, 3, 9}}, torch::kInt64);
    const torch::Tensor trained =
        network->forward(ids, nullptr, true, LlamaNetwork::Adapters::Trained).to(torch::kFloat32);
    const torch::Tensor merged =
        network->forward(ids, nullptr, false, LlamaNetwork::Adapters::Merged).to(torch::kFloat32);
    const torch::Tensor base =
        network->forward(ids, nullptr, false, LlamaNetwork::Adapters::Off).to(torch::kFloat32);
    const double scale = base.abs().max().item<double>();
    EXPECT_GT((trained - base).abs().max().item<double>(), 0.05 * scale) << "the adapters act";
    EXPECT_LT((trained - merged).abs().max().item<double>(), 0.05 * scale);
    trained.sum().backward();
    for (const auto& p : parameters)
        ASSERT_TRUE(p.grad().defined() && p.grad().abs().sum().item<double>() > 0);
}

TEST(TrainingMemory, AStepAfterGenerationPeaksNoHigherThanOneWithout) {
    // The batch comes from a model of its own, so that both trainers below see the same one.
    const std::vector<TrainingSequence> batch = tiny::sampledEpisodes(*tiny::tinyModel(11), 0, 16);
    // The first GRPO step's peak, with or without a generation before it (which forms the merged
    // float32 weights, LoraLinear::forwardMerged).
    const auto peakOfFirstStep = [&](bool generateFirst, std::int64_t& mergedBytes) {
        CountingCpuAllocator::Installed counting;
        auto model = tiny::tinyModel(11);
        LoraSettings lora;
        lora.rank = 4;
        PolicyTrainer trainer(*model, lora, OptimiserSettings{});
        EXPECT_EQ(trainer.error(), "");
        const std::int64_t beforeGeneration = counting.current();
        if (generateFirst) {
            LlamaModel::GenerationOptions greedy;
            greedy.maxTokens = 2;
            model->generate({3, 1, 4, 1}, greedy);
        }
        mergedBytes = counting.current() - beforeGeneration;
        counting.resetPeak();
        const TrainingStep step = trainer.groupPolicyStep(batch, PolicyUpdateSettings{});
        EXPECT_EQ(step.step, 1);
        return counting.peak();
    };
    std::int64_t merged = 0, none = 0;
    const std::int64_t afterGeneration = peakOfFirstStep(true, merged);
    const std::int64_t without = peakOfFirstStep(false, none);
    // Two layers' seven projections in float32: 9,216 weights each.
    EXPECT_EQ(merged, 2 * 9216 * 4) << "generation keeps the merged weights until a step";
    EXPECT_EQ(none, 0);
    EXPECT_LT(afterGeneration, without + merged / 2)
        << "peak " << afterGeneration << " bytes after a generation, " << without << " without";
}

TEST(TrainingMemory, AnEntropyOnlyReportedKeepsNoVocabularyWideTensor) {
    CountingCpuAllocator::Installed counting;
    torch::manual_seed(5);
    constexpr std::int64_t kRows = 8, kLength = 16, kVocabulary = 1000;
    const torch::Tensor logits =
        torch::randn({kRows, kLength, kVocabulary}).set_requires_grad(true);
    const torch::Tensor tokens = torch::randint(kVocabulary, {kRows, kLength}, torch::kInt64);
    // What the results and their graphs keep, beyond the logits.
    const auto kept = [&](bool entropyGradient, TokenLogprobs& out) {
        const std::int64_t before = counting.current();
        out = tokenLogprobs(logits, tokens, entropyGradient);
        return counting.current() - before;
    };
    TokenLogprobs reported, trained;
    const std::int64_t keptReported = kept(false, reported);
    const std::int64_t keptTrained = kept(true, trained);
    EXPECT_FALSE(reported.entropy.requires_grad());
    EXPECT_TRUE(trained.entropy.requires_grad());
    EXPECT_TRUE(reported.logprobs.requires_grad());
    EXPECT_TRUE(torch::allclose(reported.entropy, trained.entropy));
    EXPECT_TRUE(torch::equal(reported.logprobs, trained.logprobs));
    // The graph of a trained entropy keeps the probabilities, [rows, length, vocabulary] in
    // float32.
    EXPECT_LE(keptReported, keptTrained - kRows * kLength * kVocabulary * 4 * 9 / 10)
        << "kept " << keptReported << " bytes reported, " << keptTrained << " trained";
}

TEST(TrainingMemory, AnEntropyTermStillMovesTheUpdate) {
    // The entropy has a graph when the loss has an entropy term: the same step with and without
    // one differs.
    const std::vector<TrainingSequence> batch = tiny::sampledEpisodes(*tiny::tinyModel(11), 0, 16);
    const auto gradientNorm = [&](double entropyCoefficient) {
        auto model = tiny::tinyModel(11);
        LoraSettings lora;
        lora.rank = 4;
        PolicyTrainer trainer(*model, lora, OptimiserSettings{});
        PolicyUpdateSettings update;
        update.entropyCoefficient = entropyCoefficient;
        return trainer.groupPolicyStep(batch, update).gradNorm;
    };
    const double without = gradientNorm(0.0);
    const double with = gradientNorm(0.5);
    EXPECT_GT(std::abs(with - without), 1e-3 * without) << without << " against " << with;
}

} // namespace
} // namespace kwb::torchnn
