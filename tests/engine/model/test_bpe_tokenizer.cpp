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
#include <nlohmann/json.hpp>

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

// A tokenizer.json over the byte alphabet with the given merges and extra fields; the text is
// written to a file of its own per test.
std::filesystem::path writeTokenizerJson(const std::string& name, nlohmann::json merges,
                                         nlohmann::json added,
                                         nlohmann::json model = nlohmann::json::object()) {
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b)
        vocab[bytesToSymbols(std::string(1, char(b)))] = b;
    vocab["ab"] = 256;
    vocab["aa"] = 257;
    vocab["aaaa"] = 258;
    nlohmann::json m = {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}};
    m.update(model);
    const auto path = std::filesystem::temp_directory_path() / name;
    std::ofstream(path) << nlohmann::json{{"model", m}, {"added_tokens", added}}.dump();
    return path;
}

TEST(BpeTokenizer, ALongRunMergesAsTheRescanningDefinitionDoes) {
    // Ranks: "a a" first, then "aa aa": runs of a become aaaa tokens left to right, the rest aa
    // or a; n log n in the run's length (a 100 kB run took minutes when each merge rescanned).
    const auto path =
        writeTokenizerJson("kwb-run-tokenizer.json", {"a a", "aa aa"}, nlohmann::json::array());
    const auto loaded = BpeTokenizer::fromTokenizerJson(path.string());
    ASSERT_TRUE(loaded) << loaded.error;
    EXPECT_EQ(loaded.tokenizer->encode("aaaaaaa"), (std::vector<TokenId>{258, 257, 'a'}));
    EXPECT_EQ(loaded.tokenizer->encode("aaaaa"), (std::vector<TokenId>{258, 'a'}));
    const std::vector<TokenId> long_run = loaded.tokenizer->encode(std::string(200'001, 'a'));
    ASSERT_EQ(long_run.size(), 50'001u);
    EXPECT_EQ(long_run.front(), 258);
    EXPECT_EQ(long_run.back(), 'a');
    std::filesystem::remove(path);
}

TEST(BpeTokenizer, TheUnknownTokenOfATokenizerJsonStandsForWhatTheVocabularyCannotSpell) {
    // The vocabulary lacks the symbol of byte 0x04; tokenizers writes its unk_token there.
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b)
        if (b != 4)
            vocab[bytesToSymbols(std::string(1, char(b)))] = b;
    vocab["<unk>"] = 4;
    const auto path = std::filesystem::temp_directory_path() / "kwb-unk-tokenizer.json";
    std::ofstream(path) << nlohmann::json{{"model",
                                           {{"type", "BPE"},
                                            {"vocab", vocab},
                                            {"merges", nlohmann::json::array()},
                                            {"unk_token", "<unk>"}}}}
                               .dump();
    const auto loaded = BpeTokenizer::fromTokenizerJson(path.string());
    ASSERT_TRUE(loaded) << loaded.error;
    EXPECT_EQ(loaded.tokenizer->encode("a\x04"
                                       "b"),
              (std::vector<TokenId>{'a', 4, 'b'}));
    std::filesystem::remove(path);
}

TEST(BpeTokenizer, IllFormedUtf8IsEncodedAsReplacementCharactersAndSplitAsUsual) {
    EXPECT_EQ(repairedUtf8("ok \xC3\xA9"), "ok \xC3\xA9");
    EXPECT_EQ(repairedUtf8("a\xFF"
                           "b"),
              "a\xEF\xBF\xBD"
              "b");
    // A truncated three-byte sequence is one maximal subpart: one replacement.
    EXPECT_EQ(repairedUtf8("\xE2\x82 x"), "\xEF\xBF\xBD x");
    // Surrogates and overlong forms are ill-formed byte by byte.
    EXPECT_EQ(repairedUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    EXPECT_EQ(repairedUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
    std::string error;
    const auto p = Pretokenizer::forGgufName("gpt2", &error);
    ASSERT_TRUE(p) << error;
    // One bad byte first no longer turns the rest of the text into a single piece.
    EXPECT_EQ(p->split("\xFF"
                       "ab ab"),
              (std::vector<std::string>{"\xEF\xBF\xBD", "ab", " ab"}));
}

TEST(BpeTokenizer, ATokenizerJsonThatTokenizersRefusesIsRefusedWithTheReason) {
    const auto errorOf = [](const std::filesystem::path& path) {
        const auto loaded = BpeTokenizer::fromTokenizerJson(path.string());
        std::filesystem::remove(path);
        return loaded ? std::string() : loaded.error;
    };
    // A merge whose result the vocabulary lacks would drop text.
    EXPECT_NE(
        errorOf(writeTokenizerJson("kwb-bad-merge.json", {"a b", "b c"}, nlohmann::json::array()))
            .find("'bc', which is not in the vocabulary"),
        std::string::npos);
    EXPECT_NE(errorOf(writeTokenizerJson("kwb-odd-merge.json", {"ab"}, nlohmann::json::array()))
                  .find("neither"),
              std::string::npos);
    EXPECT_NE(errorOf(writeTokenizerJson("kwb-number-merge.json", {5}, nlohmann::json::array()))
                  .find("neither"),
              std::string::npos);
    // A negative id once wrote outside the vocabulary.
    EXPECT_NE(errorOf(writeTokenizerJson("kwb-negative-added.json", nlohmann::json::array(),
                                         {{{"id", -3}, {"content", "<neg>"}}}))
                  .find("valid id"),
              std::string::npos);
    EXPECT_NE(errorOf(writeTokenizerJson("kwb-unknown-unk.json", nlohmann::json::array(),
                                         nlohmann::json::array(), {{"unk_token", "<nope>"}}))
                  .find("not in the vocabulary"),
              std::string::npos);
}

} // namespace
} // namespace kwb::model
