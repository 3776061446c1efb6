// Sampling in LlamaModel::generateGroup: the drawn tokens follow the policy's distribution (the
// softmax of the logits over the temperature), top-k and top-p leave only their tokens, a seed
// repeats a group, and every row of a group draws on its own.
#include "engine/torch/llama_model.h"
#include "tests/engine/torch/tiny_llama.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <set>

namespace kwb::torchnn {
namespace {

using tiny::tinyModel;

const std::vector<std::int32_t> kPrompt = {3, 1, 4, 1, 5};

// The first token's probabilities under `temperature`, from the model's own logits.
std::vector<double> firstTokenProbabilities(const LlamaModel& model, double temperature) {
    const std::vector<float> logits = model.logits(kPrompt);
    const int vocabulary = model.vocabulary();
    const std::size_t last = logits.size() - std::size_t(vocabulary);
    double peak = -1e30;
    for (int t = 0; t < vocabulary; ++t)
        peak = std::max(peak, double(logits[last + std::size_t(t)]) / temperature);
    std::vector<double> p(static_cast<std::size_t>(vocabulary));
    double total = 0;
    for (int t = 0; t < vocabulary; ++t)
        total += p[std::size_t(t)] =
            std::exp(double(logits[last + std::size_t(t)]) / temperature - peak);
    for (double& v : p)
        v /= total;
    return p;
}

std::map<std::int32_t, int>
firstTokenCounts(const LlamaModel& model, const LlamaModel::GenerationOptions& options, int count) {
    std::map<std::int32_t, int> counts;
    for (const auto& g : model.generateGroup(kPrompt, count, options))
        ++counts[g.tokens.at(0)];
    return counts;
}

TEST(TokenDraw, DrawsFollowTheSoftmaxOverTheTemperature) {
    auto model = tinyModel(7);
    LlamaModel::GenerationOptions options;
    options.maxTokens = 1;
    options.temperature = 1.5;
    options.seed = 11;
    constexpr int kDraws = 6000;
    const auto counts = firstTokenCounts(*model, options, kDraws);
    const std::vector<double> p = firstTokenProbabilities(*model, options.temperature);
    for (std::size_t t = 0; t < p.size(); ++t) {
        const auto found = counts.find(std::int32_t(t));
        const double share = found == counts.end() ? 0.0 : double(found->second) / kDraws;
        // Five standard errors of a share from 6,000 draws.
        const double tolerance = 5 * std::sqrt(p[t] * (1 - p[t]) / kDraws) + 1e-3;
        EXPECT_NEAR(share, p[t], tolerance) << "token " << t;
    }
    // The recorded log-probability is the drawn token's under the same distribution.
    const auto one = model->generateGroup(kPrompt, 1, options).at(0);
    EXPECT_NEAR(std::exp(one.logprobs.at(0)), p[std::size_t(one.tokens.at(0))], 1e-4);
}

TEST(TokenDraw, TopKAndTopPLeaveOnlyTheirTokens) {
    auto model = tinyModel(7);
    const std::vector<double> p = firstTokenProbabilities(*model, 1.0);
    std::vector<std::size_t> order(p.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return p[a] > p[b]; });
    LlamaModel::GenerationOptions options;
    options.maxTokens = 1;
    options.temperature = 1.0;
    options.topK = 3;
    std::set<std::int32_t> allowed = {std::int32_t(order[0]), std::int32_t(order[1]),
                                      std::int32_t(order[2])};
    for (const auto& [token, n] : firstTokenCounts(*model, options, 500))
        EXPECT_TRUE(allowed.count(token)) << "top-k 3 drew token " << token;

    // Top-p: the smallest set of likeliest tokens whose probability reaches p.
    options.topK = 0;
    options.topP = p[order[0]] + p[order[1]] * 0.5; // reached by the second token
    allowed = {std::int32_t(order[0]), std::int32_t(order[1])};
    const auto counts = firstTokenCounts(*model, options, 500);
    for (const auto& [token, n] : counts)
        EXPECT_TRUE(allowed.count(token)) << "top-p drew token " << token;
    EXPECT_EQ(counts.size(), 2U) << "both kept tokens are drawn in 500 tries";
}

TEST(TokenDraw, ASeedRepeatsAGroupAndRowsDrawOnTheirOwn) {
    auto model = tinyModel(7);
    LlamaModel::GenerationOptions options;
    options.maxTokens = 6;
    options.temperature = 1.0;
    options.seed = 3;
    const auto first = model->generateGroup(kPrompt, 8, options);
    const auto again = model->generateGroup(kPrompt, 8, options);
    std::set<std::vector<std::int32_t>> distinct;
    for (std::size_t r = 0; r < first.size(); ++r) {
        EXPECT_EQ(first[r].tokens, again[r].tokens);
        distinct.insert(first[r].tokens);
    }
    EXPECT_GT(distinct.size(), 4U) << "rows of one group are not copies of each other";
    // Greedy rows are all the argmax.
    options.temperature = 0;
    const auto greedy = model->generateGroup(kPrompt, 3, options);
    EXPECT_EQ(greedy[0].tokens, greedy[1].tokens);
    EXPECT_EQ(greedy[0].tokens, model->generate(kPrompt, options).tokens);
}

} // namespace
} // namespace kwb::torchnn
