// The cost meter's prices: the built-in list, prefix matching, and a user file that corrects and
// extends it (a malformed file changes nothing and says why).
#include "agent/store/model_prices.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <limits>
#include <string>

using namespace kwb::agent;
namespace fs = std::filesystem;

namespace {

class ModelPrices : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kwb-prices-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override {
        clearPriceOverrides();
        fs::remove_all(dir_);
    }
    std::string writeFile(const char* name, const std::string& text) {
        const fs::path path = dir_ / name;
        std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
        return path.string();
    }
    fs::path dir_;
};

} // namespace

TEST_F(ModelPrices, builtInPricesMatchByLongestPrefix) {
    const auto mini = priceOf("gpt-4.1-mini-2025-04-14");
    ASSERT_TRUE(mini);
    EXPECT_DOUBLE_EQ(mini->inputPerMillion, 0.40);
    EXPECT_DOUBLE_EQ(priceOf("gpt-4.1-2025-04-14")->outputPerMillion, 8.0);
    EXPECT_FALSE(priceOf("qwen2.5-coder-32b"));
    TokenUsage usage{1'000'000, 100'000, 400'000};
    // 600k uncached at 2.00 + 400k cached at 0.50 + 100k out at 8.00 = 1.2 + 0.2 + 0.8.
    EXPECT_EQ(costText(usage, "gpt-4.1"), "$2.2000");
    EXPECT_EQ(costText(usage, "my-local-model"), "n/a");
}

// The server's counts: a negative one never lowers a total or makes a cost negative, and huge
// ones saturate instead of wrapping.
TEST_F(ModelPrices, usageFromTheServerIsClampedWhereItAddsUpAndIsPriced) {
    const TokenUsage negative{-5'000'000, -1'000, -7};
    EXPECT_EQ(negative.clamped(), (TokenUsage{0, 0, 0}));
    EXPECT_EQ(costText(negative, "gpt-4.1"), "$0.0000");
    TokenUsage total{10, 20, std::nullopt};
    total += negative;
    EXPECT_EQ(total, (TokenUsage{10, 20, 0}));
    const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
    total += TokenUsage{huge, huge, huge};
    total += TokenUsage{huge, huge, huge};
    EXPECT_EQ(total.inputTokens, TokenUsage::kMaxTokens);
    EXPECT_EQ(total.outputTokens, TokenUsage::kMaxTokens);
    EXPECT_EQ(total.cachedInputTokens, TokenUsage::kMaxTokens);
    EXPECT_EQ((TokenUsage{5, 1, 9}).clamped().cachedInputTokens, 5); // cached is part of input
}

TEST_F(ModelPrices, aUserFileCorrectsAndExtendsTheTable) {
    const std::string file =
        writeFile("prices.json", R"({"gpt-4.1": {"input": 1.0, "cached_input": 0.25, "output": 4.0},
            "my-local-model": {"input": 0.05, "output": 0.1}})");
    std::string error;
    EXPECT_EQ(loadPriceOverrides(file, &error), 2);
    EXPECT_TRUE(error.empty()) << error;
    EXPECT_DOUBLE_EQ(priceOf("gpt-4.1-2025-04-14")->inputPerMillion, 1.0);
    EXPECT_DOUBLE_EQ(priceOf("gpt-4.1-mini")->inputPerMillion, 0.40); // the longer built-in wins
    const auto local = priceOf("my-local-model-q4");
    ASSERT_TRUE(local);
    EXPECT_DOUBLE_EQ(local->cachedInputPerMillion, 0.05); // defaults to the input price
}

TEST_F(ModelPrices, aMalformedFileChangesNothing) {
    const std::string good =
        writeFile("good.json", R"({"my-local-model": {"input": 1, "output": 2}})");
    EXPECT_EQ(loadPriceOverrides(good), 1);
    for (const std::string text :
         {"{not json", "[1, 2]", R"({"m": {"input": -1, "output": 2}})", R"({"m": {"input": 1}})",
          R"({"m": {"input": 1, "output": 2, "cached_input": "cheap"}})"}) {
        const std::string bad = writeFile("bad.json", text);
        std::string error;
        EXPECT_EQ(loadPriceOverrides(bad, &error), 0);
        EXPECT_FALSE(error.empty()) << text;
        EXPECT_TRUE(priceOf("my-local-model")); // the earlier file's prices stay
    }
    std::string missing;
    EXPECT_EQ(loadPriceOverrides((dir_ / "none.json").string(), &missing), 0);
    EXPECT_NE(missing.find("cannot read"), std::string::npos) << missing;
}

TEST(TokenUsagePlausibility, OneReplyCostsNoMoreThanItsLimitAllows) {
    // A server said 10^12 output tokens for one line of text: the run's cost read $8,000,000.
    TokenUsage reported;
    reported.inputTokens = 1'000'000'000'000;
    reported.outputTokens = 1'000'000'000'000;
    reported.cachedInputTokens = 1'000'000'000'000;
    const TokenUsage unlimited = reported.plausibleForOneReply(std::nullopt);
    EXPECT_EQ(unlimited.outputTokens, TokenUsage::kMaxReplyOutput);
    EXPECT_EQ(unlimited.inputTokens, TokenUsage::kMaxPrompt);
    EXPECT_EQ(unlimited.cachedInputTokens, TokenUsage::kMaxPrompt);
    EXPECT_EQ(reported.plausibleForOneReply(4096).outputTokens, 4096);
    // Honest counts pass unchanged, including hidden reasoning beyond the visible text.
    TokenUsage honest;
    honest.inputTokens = 120'000;
    honest.outputTokens = 30'000;
    EXPECT_EQ(honest.plausibleForOneReply(std::nullopt), honest);
    EXPECT_EQ(honest.plausibleForOneReply(32'000), honest);
}
