// The one convention for tools that training and the local agent share: how the offer reads in
// the system turn, how a call is written, and how a reply's calls are read back, including
// replies a small model gets wrong.
#include "engine/model/tool_call_text.h"

#include <gtest/gtest.h>

namespace kwb::model {
namespace {

using nlohmann::json;

json tools() {
    return json::parse(R"([
      {"type": "function", "function": {"name": "run_command", "description": "Runs a shell command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}},
      {"name": "evaluate", "description": "Scores the workspace."}])");
}

TEST(ToolCallText, TheOfferListsEachToolOnItsOwnLineAndShowsTheCallForm) {
    const std::string text = toolInstructions(tools());
    EXPECT_NE(text.find("<tools>\n{\"name\":\"run_command\",\"description\":\"Runs a shell "
                        "command.\",\"parameters\":{\"properties\":{\"command\":{\"type\":"
                        "\"string\"}},\"type\":\"object\"}}\n{\"name\":\"evaluate\","
                        "\"description\":\"Scores the workspace.\",\"parameters\":{}}\n</tools>"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("<tool_call>\n{\"name\": \"<function>\""), std::string::npos);
    EXPECT_EQ(toolInstructions(json::array()), "");
    EXPECT_EQ(toolInstructions(json()), "");
}

TEST(ToolCallText, TurnsCarryCallsResultsAndTheOfferInTheSystemTurn) {
    const json messages = json::parse(R"([
      {"role": "system", "content": "You optimise kernels."},
      {"role": "user", "content": [{"type": "text", "text": "Make it "}, {"type": "text", "text": "fast."}]},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function",
        "function": {"name": "run_command", "arguments": "{\"command\": \"ls\"}"}}]},
      {"role": "tool", "tool_call_id": "a", "content": "model.py"}])");
    std::string error;
    const auto turns = conversationTurns(messages, tools(), ChatTemplate::chatMl(), &error);
    ASSERT_EQ(turns.size(), 4u) << error;
    EXPECT_EQ(turns[0].content.rfind("You optimise kernels.\n\n# Tools\n", 0), 0u);
    EXPECT_EQ(turns[1].content, "Make it fast.");
    EXPECT_EQ(turns[2].content,
              "<tool_call>\n{\"name\":\"run_command\",\"arguments\":{\"command\":\"ls\"}}\n"
              "</tool_call>");
    EXPECT_EQ(turns[3].role, "tool");
    EXPECT_EQ(turns[3].content, "model.py");

    const auto noSystem = conversationTurns(json::parse(R"([{"role": "user", "content": "hi"}])"),
                                            tools(), ChatTemplate::chatMl("Be brief."), &error);
    ASSERT_EQ(noSystem.size(), 2u);
    EXPECT_EQ(noSystem[0].role, "system");
    EXPECT_EQ(noSystem[0].content.rfind("Be brief.\n\n# Tools", 0), 0u);

    EXPECT_TRUE(conversationTurns(json::parse(R"([{"role": "critic", "content": "x"}])"), tools(),
                                  ChatTemplate::chatMl(), &error)
                    .empty());
    EXPECT_EQ(error, "message 0 has the unknown role 'critic'");
    EXPECT_TRUE(conversationTurns(json::object(), tools(), ChatTemplate::chatMl(), &error).empty());
}

TEST(ToolCallText, AWrittenCallIsReadBackAsTheSameCall) {
    const json message = json::parse(R"({"role": "assistant", "content": "Listing first.",
      "tool_calls": [{"function": {"name": "run_command", "arguments": {"command": "ls -l"}}},
                     {"function": {"name": "evaluate", "arguments": "{}"}}]})");
    const ParsedReply reply = parseToolCalls(assistantText(message));
    EXPECT_EQ(reply.content, "Listing first.");
    ASSERT_EQ(reply.calls.size(), 2u);
    EXPECT_EQ(reply.calls[0].name, "run_command");
    EXPECT_EQ(json::parse(reply.calls[0].argumentsJson), json::parse(R"({"command": "ls -l"})"));
    EXPECT_EQ(reply.calls[1].name, "evaluate");
    EXPECT_EQ(reply.calls[1].argumentsJson, "{}");
}

TEST(ToolCallText, RepliesASmallModelGetsWrongStayUsable) {
    // No call at all: the whole reply is content.
    EXPECT_TRUE(parseToolCalls("  I would tile the loop.\n").calls.empty());
    EXPECT_EQ(parseToolCalls("  I would tile the loop.\n").content, "I would tile the loop.");

    // Cut off by the token limit: the call still counts with what was written.
    ParsedReply cut = parseToolCalls("<tool_call>\n{\"name\": \"evaluate\", \"arguments\": {}}");
    ASSERT_EQ(cut.calls.size(), 1u);
    EXPECT_EQ(cut.calls[0].name, "evaluate");

    // Broken JSON with a readable name: a call whose arguments are the text, for a tool error.
    ParsedReply broken =
        parseToolCalls("ok <tool_call>{\"name\": \"run_command\", \"arguments\": {\"command\": "
                       "\"ls}</tool_call> after");
    ASSERT_EQ(broken.calls.size(), 1u);
    EXPECT_EQ(broken.calls[0].name, "run_command");
    EXPECT_TRUE(json::parse(broken.calls[0].argumentsJson, nullptr, false).is_discarded());
    EXPECT_EQ(broken.content, "ok  after");

    // Llama 3.1 spells the arguments "parameters"; a string holding JSON is that JSON.
    ParsedReply llama = parseToolCalls(
        "<tool_call>{\"name\": \"evaluate\", \"parameters\": {\"quick\": true}}</tool_call>"
        "<tool_call>{\"name\": \"run_command\", \"arguments\": \"{\\\"command\\\": \\\"pwd\\\"}\"}"
        "</tool_call>");
    ASSERT_EQ(llama.calls.size(), 2u);
    EXPECT_EQ(llama.calls[0].argumentsJson, "{\"quick\":true}");
    EXPECT_EQ(llama.calls[1].argumentsJson, "{\"command\": \"pwd\"}");

    // Nothing that names a function is not a call: the block stays in the text as written.
    ParsedReply nameless = parseToolCalls("see <tool_call>[1, 2]</tool_call><tool_call>oops");
    EXPECT_TRUE(nameless.calls.empty());
    EXPECT_EQ(nameless.content, "see <tool_call>[1, 2]</tool_call><tool_call>oops");
}

} // namespace
} // namespace kwb::model
