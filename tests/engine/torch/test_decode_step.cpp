// The fixed-shape decoding step that CUDA graphs replay (LlamaNetwork::decodeStep, DecodeGraphs):
// on the CPU its logits equal the ordinary forward pass over the cache, whatever the window's
// later slots hold, and a generation stepped through DecodeGraphs equals the eager steps across
// window changes.
#include "engine/torch/decode_graphs.h"
#include "engine/torch/llama_network.h"
#include "tests/engine/torch/tiny_llama.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace kwb::torchnn {
namespace {

std::unique_ptr<LlamaNetwork> tinyNetwork(std::int64_t context = 64) {
    model::LlamaConfig config = tiny::tinyConfig();
    config.context = context;
    return LlamaNetwork::randomlyInitialised(config, 5, torch::Device(torch::kCPU), torch::kFloat32,
                                             /*std=*/0.3);
}

torch::Tensor ids(std::vector<std::int64_t> values) {
    const auto n = std::int64_t(values.size());
    return torch::tensor(values, torch::kInt64).view({1, n});
}

// The last position's logits of the whole sequence, without a cache.
torch::Tensor lastLogitsOf(const LlamaNetwork& net, std::vector<std::int64_t> sequence) {
    return net.forward(ids(std::move(sequence)), nullptr, false, LlamaNetwork::Adapters::Merged)
        .select(1, -1);
}

TEST(DecodeStep, OneStepEqualsTheForwardPassOverTheWholeSequence) {
    auto net = tinyNetwork();
    std::string error;
    // Adapters with a non-zero update, so the merged weights differ from the base ones.
    net->attachLora(4, 8.0, {"q_proj", "v_proj", "down_proj"}, 3, error);
    ASSERT_TRUE(error.empty()) << error;
    for (const torch::Tensor& parameter : net->adapterParameters()) {
        torch::NoGradGuard noGrad;
        parameter.normal_(0.0, 0.2);
    }
    net->adaptersChanged();
    const std::vector<std::int64_t> prompt = {3, 1, 4, 1, 5, 9};
    LlamaNetwork::KvCache cache = net->allocateCache(1, 32);
    net->forward(ids(prompt), &cache, false, LlamaNetwork::Adapters::Merged);
    ASSERT_EQ(cache.length, 6);

    const torch::Tensor position = torch::tensor({std::int64_t(6)}, torch::kInt64);
    const torch::Tensor stepped =
        net->decodeStep(ids({2}), position, cache, /*window=*/16, LlamaNetwork::Adapters::Merged);
    ASSERT_EQ(stepped.sizes(), (std::vector<std::int64_t>{1, 1, 16}));
    std::vector<std::int64_t> whole = prompt;
    whole.push_back(2);
    const torch::Tensor expected = lastLogitsOf(*net, whole);
    EXPECT_TRUE(torch::allclose(stepped.select(1, 0).squeeze(0), expected.squeeze(0), 1e-5, 1e-5))
        << stepped << expected;
    // The step wrote its key and value where the next one reads them.
    EXPECT_GT(cache.keys.front().select(2, 6).abs().sum().item<float>(), 0.0F);
}

TEST(DecodeStep, SlotsAfterThePositionInTheWindowDoNotCount) {
    auto net = tinyNetwork();
    const std::vector<std::int64_t> prompt = {7, 2, 8};
    LlamaNetwork::KvCache cache = net->allocateCache(1, 32);
    net->forward(ids(prompt), &cache, false, LlamaNetwork::Adapters::Merged);
    // What a longer sequence would leave behind in the slots after the position.
    for (auto* tensors : {&cache.keys, &cache.values})
        for (torch::Tensor& t : *tensors)
            t.narrow(2, 4, 28).normal_(0.0, 5.0);
    const torch::Tensor position = torch::tensor({std::int64_t(3)}, torch::kInt64);
    const torch::Tensor stepped =
        net->decodeStep(ids({6}), position, cache, /*window=*/32, LlamaNetwork::Adapters::Merged);
    const torch::Tensor expected = lastLogitsOf(*net, {7, 2, 8, 6});
    EXPECT_TRUE(torch::allclose(stepped.select(1, 0).squeeze(0), expected.squeeze(0), 1e-5, 1e-5));
}

TEST(DecodeGraphs, WithoutAGpuStepsEqualTheEagerStepsAcrossWindows) {
    // A cache long enough for two windows (256, then 512 positions), rows of a batch apart.
    auto net = tinyNetwork(/*context=*/640);
    EXPECT_FALSE(DecodeGraphs::wanted(*net)) << "graphs are for CUDA devices";
    const std::vector<std::int64_t> prompt = {1, 2, 3, 4, 5};
    const std::int64_t batch = 2, capacity = 600;
    LlamaNetwork::KvCache stepped = net->allocateCache(batch, capacity);
    LlamaNetwork::KvCache eager = net->allocateCache(batch, capacity);
    const torch::Tensor input = ids(prompt).repeat({batch, 1});
    net->forward(input, &stepped, false, LlamaNetwork::Adapters::Merged);
    net->forward(input, &eager, false, LlamaNetwork::Adapters::Merged);

    DecodeGraphs graphs(*net, stepped, batch);
    EXPECT_FALSE(graphs.fallbackReason().empty()) << "on the CPU the steps run eagerly";
    torch::Tensor next = torch::tensor({std::int64_t(6), std::int64_t(9)}, torch::kInt64);
    for (int step = 0; step < 300; ++step) {
        const torch::Tensor fromGraphs = graphs.step(next);
        const torch::Tensor fromEager =
            net->forward(next.view({batch, 1}), &eager, false, LlamaNetwork::Adapters::Merged)
                .select(1, -1);
        ASSERT_EQ(stepped.length, eager.length);
        ASSERT_TRUE(torch::allclose(fromGraphs, fromEager, 1e-4, 1e-4))
            << "step " << step << " at position " << eager.length - 1;
        // Each row follows its own greedy continuation.
        next = fromEager.argmax(-1);
    }
    EXPECT_EQ(stepped.length, std::int64_t(prompt.size()) + 300);
}

} // namespace
} // namespace kwb::torchnn
