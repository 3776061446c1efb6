// An exported episode as training tokens: the chat template's text, token for token, with only
// the trained assistant turns' own tokens marked (tiny.gguf's tokenizer knows ChatML's markers).
#include "engine/model/gguf_file.h"
#include "engine/model/tool_call_text.h"
#include "engine/model/training_conversation.h"

#include <gtest/gtest.h>

namespace kwb::model {
namespace {

std::unique_ptr<BpeTokenizer> tiny() {
    const auto file = GgufFile::open(std::string(KWB_TEST_DATA_DIR) + "/model/tiny.gguf");
    EXPECT_TRUE(file) << file.error;
    auto loaded = BpeTokenizer::fromGguf(*file.file);
    EXPECT_TRUE(loaded) << loaded.error;
    return std::move(loaded.tokenizer);
}

nlohmann::json episode() {
    return nlohmann::json::parse(R"({
      "messages": [
        {"role": "system", "content": "You write CUDA kernels."},
        {"role": "user", "content": "Make the GELU faster."},
        {"role": "assistant", "content": "First I look.",
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "read_file", "arguments": "{\"path\": \"model.py\"}"}}]},
        {"role": "tool", "content": "import torch", "tool_call_id": "c1"},
        {"role": "assistant", "content": "Done."}
      ],
      "loss_mask": [0, 0, 1, 0, 1]})");
}

// The text of the tokens whose flag is `wanted`, run by run.
std::vector<std::string> runs(const BpeTokenizer& tok, const TokenizedConversation& c) {
    std::vector<std::string> out;
    std::vector<TokenId> current;
    for (std::size_t i = 0; i <= c.tokens.size(); ++i) {
        if (i < c.tokens.size() && c.trained[i]) {
            current.push_back(c.tokens[i]);
        } else if (!current.empty()) {
            out.push_back(tok.decode(current));
            current.clear();
        }
    }
    return out;
}

TEST(TrainingConversation, TrainsExactlyTheAssistantsTurnsThroughTheirEndMarker) {
    const auto tok = tiny();
    const ChatTemplate chat = ChatTemplate::chatMl("You are helpful.");
    const TokenizedConversation c = tokenizeConversation(episode(), *tok, chat);
    ASSERT_EQ(c.error, "");
    ASSERT_EQ(c.tokens.size(), c.trained.size());
    const nlohmann::json row = episode();
    const auto& m = row["messages"];
    std::vector<ChatTurn> turns;
    for (const auto& message : m)
        turns.push_back({message["role"], message["role"] == "assistant"
                                              ? assistantText(message)
                                              : message["content"].get<std::string>()});
    EXPECT_EQ(tok->decode(c.tokens), chat.render(turns, false));
    EXPECT_EQ(runs(*tok, c),
              (std::vector<std::string>{
                  "First I look.\n<tool_call>\n{\"name\":\"read_file\",\"arguments\":{\"path\":"
                  "\"model.py\"}}\n</tool_call><|im_end|>",
                  "Done.<|im_end|>"}));
}

TEST(TrainingConversation, TheMaskChoosesTurnsAndBadRowsAreExplained) {
    const auto tok = tiny();
    const ChatTemplate chat = ChatTemplate::chatMl();
    nlohmann::json row = episode();
    row["loss_mask"] = {0, 0, 0, 0, 1};
    EXPECT_EQ(runs(*tok, tokenizeConversation(row, *tok, chat)),
              (std::vector<std::string>{"Done.<|im_end|>"}));
    row.erase("loss_mask");
    EXPECT_EQ(runs(*tok, tokenizeConversation(row, *tok, chat)).size(), 2u)
        << "without a mask every assistant turn trains";

    row["loss_mask"] = {0, 1};
    EXPECT_NE(tokenizeConversation(row, *tok, chat).error.find("2 entries for 5 messages"),
              std::string::npos);
    row["loss_mask"] = {0, 0, 0, 0, 0};
    EXPECT_EQ(tokenizeConversation(row, *tok, chat).error, "no assistant turn is trained");
    EXPECT_EQ(tokenizeConversation(nlohmann::json::array(), *tok, chat).error,
              "the row has no \"messages\" array");
    nlohmann::json roleless = episode();
    roleless["messages"][1].erase("role");
    EXPECT_EQ(tokenizeConversation(roleless, *tok, chat).error, "message 1 has no role");
    EXPECT_TRUE(tokenizeConversation(roleless, *tok, chat).tokens.empty());
}

TEST(TrainingConversation, ToolsOfferedInTheRowCloseTheSystemTurnAsAtRunTime) {
    const auto tok = tiny();
    const ChatTemplate chat = ChatTemplate::chatMl("You are helpful.");
    nlohmann::json row = episode();
    row["tools"] = nlohmann::json::parse(
        R"([{"type": "function", "function": {"name": "read_file", "description": "Reads."}}])");
    const TokenizedConversation c = tokenizeConversation(row, *tok, chat);
    ASSERT_EQ(c.error, "");
    std::string error;
    const auto turns = conversationTurns(row["messages"], row["tools"], chat, &error);
    EXPECT_EQ(tok->decode(c.tokens), chat.render(turns, false));
    EXPECT_NE(tok->decode(c.tokens).find("You write CUDA kernels.\n\n# Tools"), std::string::npos);
    EXPECT_EQ(runs(*tok, c).size(), 2u) << "the mask still numbers the row's own messages";

    // A row without a system message gets one: the template's default prompt and the tools,
    // and the mask keeps to the messages it was written for.
    row["messages"].erase(0);
    row["loss_mask"] = {0, 1, 0, 0};
    const TokenizedConversation without = tokenizeConversation(row, *tok, chat);
    ASSERT_EQ(without.error, "");
    EXPECT_EQ(
        tok->decode(without.tokens).rfind("<|im_start|>system\nYou are helpful.\n\n# Tools", 0),
        0u);
    EXPECT_EQ(runs(*tok, without).size(), 1u);
}

TEST(TrainingConversation, SampledTurnsTrainOnTheIdsTheModelDrewWithTheirLogprobs) {
    const auto tok = tiny();
    const ChatTemplate chat = ChatTemplate::chatMl();
    nlohmann::json row = episode();
    const std::optional<TokenId> end = tok->tokenId("<|im_end|>");
    ASSERT_TRUE(end);
    // Turn 2's stored text ("First I look." with its tool call, as the provider parsed it) is not
    // what the ids spell: the ids are what the model drew, and they are what trains. It stopped
    // at the end-of-turn marker; turn 4 was cut by the token limit (no marker).
    std::vector<TokenId> drawn = tok->encode("Hmm");
    drawn.push_back(*end);
    std::vector<float> firstLogprobs;
    for (std::size_t k = 0; k < drawn.size(); ++k)
        firstLogprobs.push_back(-0.5f - float(k));
    const std::vector<TokenId> cut = tok->encode("Do");
    row["sampled_tokens"] = nlohmann::json::array(
        {nullptr,
         nullptr,
         {{"ids", drawn}, {"logprobs", firstLogprobs}},
         nullptr,
         {{"ids", cut}, {"logprobs", std::vector<float>(cut.size(), -2.0f)}}});
    const TokenizedConversation c = tokenizeConversation(row, *tok, chat);
    ASSERT_EQ(c.error, "");
    ASSERT_EQ(c.sampledLogprobs.size(), c.tokens.size());
    // The trained tokens are exactly the drawn ids, in order, with their log-probabilities.
    std::vector<TokenId> trained;
    std::vector<float> trainedLogprobs;
    for (std::size_t i = 0; i < c.tokens.size(); ++i)
        if (c.trained[i]) {
            trained.push_back(c.tokens[i]);
            trainedLogprobs.push_back(c.sampledLogprobs[i]);
        } else {
            EXPECT_EQ(c.sampledLogprobs[i], 0.0f);
        }
    std::vector<TokenId> expected = drawn;
    expected.insert(expected.end(), cut.begin(), cut.end());
    EXPECT_EQ(trained, expected);
    EXPECT_EQ(trainedLogprobs.front(), -0.5f);
    EXPECT_EQ(trainedLogprobs.back(), -2.0f);
    // The cut reply's marker follows as context, then the template goes on as before.
    const std::string text = tok->decode(c.tokens);
    EXPECT_NE(text.find("<|im_start|>assistant\nHmm<|im_end|>\n<|im_start|>tool"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("First I look."), std::string::npos);
    EXPECT_NE(text.find("<|im_start|>assistant\nDo<|im_end|>\n"), std::string::npos) << text;
    EXPECT_NE(text.find("<|im_start|>tool\nimport torch<|im_end|>"), std::string::npos);

    // One trained turn without its sampled ids: no log-probabilities for the row (the trainer
    // takes them from the policy) but the drawn ids still train.
    row["sampled_tokens"][4] = nullptr;
    const TokenizedConversation mixed = tokenizeConversation(row, *tok, chat);
    ASSERT_EQ(mixed.error, "");
    EXPECT_TRUE(mixed.sampledLogprobs.empty());

    // Ids that are not this model's tokens, or counts that differ, are refused whole.
    row["sampled_tokens"][2]["ids"][0] = 1 << 30;
    EXPECT_NE(tokenizeConversation(row, *tok, chat).error.find("is not a token of this model"),
              std::string::npos);
    row["sampled_tokens"][2] = {{"ids", {1, 2}}, {"logprobs", {-1.0}}};
    EXPECT_NE(tokenizeConversation(row, *tok, chat).error.find("differ in count"),
              std::string::npos);
    row["sampled_tokens"] = nlohmann::json::array({nullptr});
    EXPECT_EQ(tokenizeConversation(row, *tok, chat).error,
              "\"sampled_tokens\" does not have one entry per message");
}

} // namespace
} // namespace kwb::model
