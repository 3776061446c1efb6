// Generation on a CUDA device through CUDA graphs (DecodeGraphs) against the same generation
// with the steps launched one by one (KWB_CUDA_GRAPHS=off): the same tokens and log-probabilities
// in float32, the same logits within bfloat16's precision, across windows, batches and an adapter
// update between two generations. Skips without a GPU.
#include "engine/torch/decode_graphs.h"
#include "engine/torch/llama_model.h"
#include "engine/torch/llama_network.h"
#include "tests/engine/torch/tiny_llama.h"

#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>
#include <iostream>
#include <torch/torch.h>

namespace kwb::torchnn {
namespace {

// Token ids as int64 (a braced list of mixed integer types makes a tensor of mixed scalar types,
// which torch refuses).
torch::Tensor longs(const std::vector<std::int64_t>& values) {
    return torch::tensor(values, torch::kInt64);
}

class DecodeGraphsGpu : public ::testing::Test {
protected:
    void SetUp() override {
        if (!torch::cuda::is_available())
            GTEST_SKIP() << "SKIPPED: no CUDA device for torch";
    }
    void TearDown() override { unsetenv("KWB_CUDA_GRAPHS"); }

    static std::unique_ptr<LlamaModel> model(torch::Dtype dtype) {
        model::LlamaConfig config = tiny::tinyConfig();
        config.context = 1024;
        return LlamaModel::fromNetwork(LlamaNetwork::randomlyInitialised(
            config, 5, torch::Device(torch::kCUDA), dtype, /*std=*/0.3));
    }

    static std::vector<LlamaModel::Generation> generate(const LlamaModel& m, bool graphs, int count,
                                                        double temperature) {
        if (graphs)
            unsetenv("KWB_CUDA_GRAPHS");
        else
            setenv("KWB_CUDA_GRAPHS", "off", 1);
        LlamaModel::GenerationOptions options;
        options.maxTokens = 600; // past two windows (256, 512)
        options.temperature = temperature;
        options.seed = 17;
        return m.generateGroup({3, 1, 4, 1, 5}, count, options);
    }

    static void expectSame(const std::vector<LlamaModel::Generation>& graphs,
                           const std::vector<LlamaModel::Generation>& eager, double tolerance) {
        ASSERT_EQ(graphs.size(), eager.size());
        for (std::size_t r = 0; r < graphs.size(); ++r) {
            EXPECT_EQ(graphs[r].decoding.rfind("cuda graphs (", 0), 0U) << graphs[r].decoding;
            EXPECT_EQ(eager[r].decoding, "eager");
            ASSERT_EQ(graphs[r].tokens, eager[r].tokens) << "row " << r;
            for (std::size_t i = 0; i < graphs[r].logprobs.size(); ++i)
                ASSERT_NEAR(graphs[r].logprobs[i], eager[r].logprobs[i], tolerance)
                    << "row " << r << " token " << i;
        }
    }
};

TEST_F(DecodeGraphsGpu, GreedyFloat32GenerationEqualsTheEagerSteps) {
    auto m = model(torch::kFloat32);
    const auto graphs = generate(*m, true, 1, 0.0);
    const auto eager = generate(*m, false, 1, 0.0);
    expectSame(graphs, eager, 1e-3);
    EXPECT_EQ(graphs.front().decoding, "cuda graphs (3 captured)") << "windows 256, 512, 1024";
}

TEST_F(DecodeGraphsGpu, TeacherForcedBfloat16StepsEqualTheEagerSteps) {
    // bfloat16, as generation runs on a GPU: the graphs' attention (a masked window) and the
    // eager one (the cache so far) round differently, so a sampled continuation may part ways
    // at a near-tie; fed the same tokens, every step's logits agree within bfloat16's precision.
    auto m = model(torch::kBFloat16);
    const LlamaNetwork& net = m->network();
    const std::int64_t batch = 4, capacity = 600;
    LlamaNetwork::KvCache graphed = net.allocateCache(batch, capacity);
    LlamaNetwork::KvCache eager = net.allocateCache(batch, capacity);
    const torch::Tensor prompt = longs({3, 1, 4, 1, 5}).view({1, 5}).repeat({batch, 1});
    net.forward(prompt.to(net.device), &graphed, false, LlamaNetwork::Adapters::Merged);
    net.forward(prompt.to(net.device), &eager, false, LlamaNetwork::Adapters::Merged);
    DecodeGraphs graphs(net, graphed, batch);
    torch::Tensor next = longs({6, 9, 2, 11});
    double worst = 0;
    for (int step = 0; step < 590; ++step) {
        const torch::Tensor fromGraphs = graphs.step(next).cpu();
        const torch::Tensor fromEager = net.forward(next.view({batch, 1}).to(net.device), &eager,
                                                    false, LlamaNetwork::Adapters::Merged)
                                            .select(1, -1)
                                            .to(torch::kFloat32)
                                            .cpu();
        worst = std::max(worst, (fromGraphs - fromEager).abs().max().item<double>());
        ASSERT_TRUE(torch::allclose(fromGraphs, fromEager, 5e-2, 5e-2))
            << "step " << step << ": largest difference " << worst;
        next = fromEager.argmax(-1);
    }
    EXPECT_TRUE(graphs.fallbackReason().empty()) << graphs.fallbackReason();
    EXPECT_EQ(graphs.graphsCaptured(), 3);
    std::cout << "largest logit difference over 590 steps: " << worst << "\n";
}

TEST_F(DecodeGraphsGpu, AnAdapterUpdateBetweenGenerationsIsSeen) {
    auto m = model(torch::kFloat32);
    std::string error;
    m->network().attachLora(4, 8.0, {"q_proj", "o_proj", "up_proj"}, 3, error);
    ASSERT_TRUE(error.empty()) << error;
    const auto before = generate(*m, true, 1, 0.0);
    {
        torch::NoGradGuard noGrad;
        for (const torch::Tensor& parameter : m->network().adapterParameters())
            parameter.normal_(0.0, 0.5);
    }
    m->network().adaptersChanged();
    const auto after = generate(*m, true, 1, 0.0);
    expectSame(after, generate(*m, false, 1, 0.0), 1e-3);
    EXPECT_NE(after.front().logprobs, before.front().logprobs) << "the update changed nothing";
}

} // namespace
} // namespace kwb::torchnn
