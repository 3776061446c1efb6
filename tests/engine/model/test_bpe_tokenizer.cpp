// The byte-level BPE on tiny.gguf's vocabulary (256 byte symbols, five merges, two special
// tokens) and on tokenizer.json files; the real model's tokenizer is compared with transformers
// and tokenizers in model.reference (tests/model/test_model_reference.py).
#include "engine/model/bpe_tokenizer.h"
#include "engine/model/byte_level.h"
#include "engine/model/gguf_file.h"
#include "engine/model/pretokenizer.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace kwb::model {
namespace {

const std::string kTiny = std::string(KWB_TEST_DATA_DIR) + "/model/tiny.gguf";

std::unique_ptr<BpeTokenizer> tiny() {
    const auto file = GgufFile::open(kTiny);
    EXPECT_TRUE(file) << file.error;
    auto loaded = BpeTokenizer::fromGguf(*file.file);
    EXPECT_TRUE(loaded) << loaded.error;
    return std::move(loaded.tokenizer);
}

TEST(ByteLevel, EveryByteRoundTripsAndSpaceReadsAsG) {
    std::string all;
    for (int b = 0; b < 256; ++b)
        all += char(b);
    EXPECT_EQ(symbolsToBytes(bytesToSymbols(all)), all);
    EXPECT_EQ(bytesToSymbols(" "), "\xC4\xA0"); // U+0120, "Ġ"
    EXPECT_EQ(bytesToSymbols("a"), "a");
    EXPECT_FALSE(symbolsToBytes("\xE6\x97\xA5")); // a CJK code point is no byte symbol
}

TEST(BpeTokenizer, MergesApplyByRankAndSpecialTokensSplitFirst) {
    const auto t = tiny();
    ASSERT_TRUE(t);
    EXPECT_EQ(t->vocabularySize(), 263u);
    // "the": t h e -> t he ("h e" is rank 1; "Ġ t" needs a space); " the" -> Ġt he -> Ġthe.
    EXPECT_EQ(t->encode("the"), (std::vector<TokenId>{116, 257}));
    EXPECT_EQ(t->encode(" the"), (std::vector<TokenId>{258}));
    EXPECT_EQ(t->encode("<|im_start|>in a<|im_end|>"), (std::vector<TokenId>{261, 259, 260, 262}));
    // As plain text the special spelling is bytes like any other.
    EXPECT_GT(t->encode("<|im_start|>", false).size(), 1u);
    EXPECT_EQ(t->bos(), 261);
    EXPECT_EQ(t->eos(), 262);
    EXPECT_TRUE(t->isSpecial(262));
    EXPECT_FALSE(t->isSpecial(258));
}

TEST(BpeTokenizer, DecodingGivesTheBytesBack) {
    const auto t = tiny();
    ASSERT_TRUE(t);
    for (const std::string text :
         {"", " ", "the cat\n\tin a hat", "héllo 日本語 🚀", "<|im_start|>user\nhi<|im_end|>"}) {
        EXPECT_EQ(t->decode(t->encode(text)), text);
    }
    EXPECT_EQ(t->decode(t->encode("<|im_start|>x<|im_end|>"), true), "x");
    EXPECT_EQ(t->decode({-1, 100000, 120}), "x"); // ids outside the vocabulary are dropped
}

TEST(Pretokenizer, Gpt2PatternKeepsTheTextAndSplitsLikeGpt2) {
    std::string error;
    const auto p = Pretokenizer::forGgufName("gpt2", &error);
    ASSERT_TRUE(p) << error;
    const std::vector<std::string> pieces = p->split("I'm here  now 123!!");
    EXPECT_EQ(pieces, (std::vector<std::string>{"I", "'m", " here", " ", " now", " 123", "!!"}));
    const auto digits = Pretokenizer::forGgufName("smollm", &error);
    ASSERT_TRUE(digits) << error;
    EXPECT_EQ(digits->split(" 123"), (std::vector<std::string>{" ", "1", "2", "3"}));
    EXPECT_FALSE(Pretokenizer::forGgufName("no-such-pre", &error));
    EXPECT_NE(error.find("unknown pre-tokenizer"), std::string::npos);
}

TEST(Pretokenizer, UnsupportedTokenizerJsonStepsAreNamed) {
    std::string error;
    EXPECT_FALSE(Pretokenizer::fromTokenizerJson({{"type", "Metaspace"}}, &error));
    EXPECT_NE(error.find("Metaspace"), std::string::npos);
    EXPECT_FALSE(Pretokenizer::fromTokenizerJson(
        {{"type", "Split"}, {"pattern", {{"Regex", "("}}}, {"behavior", "Isolated"}}, &error));
    EXPECT_NE(error.find("cannot compile"), std::string::npos) << error;
}

TEST(BpeTokenizer, ATokenizerJsonWithoutABpeModelIsAnError) {
    const auto path = std::filesystem::temp_directory_path() / "kwb-not-bpe-tokenizer.json";
    std::ofstream(path) << R"({"model": {"type": "Unigram", "vocab": []}})";
    const auto loaded = BpeTokenizer::fromTokenizerJson(path.string());
    EXPECT_FALSE(loaded);
    EXPECT_NE(loaded.error.find("no BPE model"), std::string::npos) << loaded.error;
    std::filesystem::remove(path);
}

} // namespace
} // namespace kwb::model
