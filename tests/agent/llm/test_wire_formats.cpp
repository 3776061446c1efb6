#include "agent/providers/anthropic_messages_format.h"
#include "agent/providers/openai_chat_format.h"
#include "tests/agent/recording_sink.h"

#include <gtest/gtest.h>

using namespace kwb::agent;
using kwb::agent::test_support::RecordingSink;
using nlohmann::json;

namespace {

CompletionRequest toolConversation() {
    CompletionRequest request;
    request.messages = {
        Message::system("You optimise kernels."),
        Message::system("Be brief."),
        Message::user("Check the build."),
        Message::assistant("", {{"call_a", "compile", R"({"target":"all"})"},
                                {"call_b", "read_file", "not json"}}),
        Message::toolResult("call_a", "ok"),
        Message::toolResult("call_b", "no such file", true),
        Message::user("And now?"),
    };
    request.tools = {{"compile",
                      "Builds the extension",
                      {{"type", "object"}, {"properties", {{"target", {{"type", "string"}}}}}}}};
    request.maxTokens = 256;
    request.temperature = 0.5;
    request.stop = {"</done>"};
    return request;
}

SseEvent dataEvent(std::string data, std::string name = "") {
    return {std::move(name), std::move(data), ""};
}

} // namespace

TEST(OpenAiChatFormat, RequestBody) {
    const json body = openAiChatRequestBody(toolConversation(), "gpt-test");
    EXPECT_EQ(body["model"], "gpt-test");
    EXPECT_EQ(body["stream"], true);
    EXPECT_EQ(body["stream_options"]["include_usage"], true);
    EXPECT_EQ(body["max_tokens"], 256);
    EXPECT_EQ(body["temperature"], 0.5);
    EXPECT_EQ(body["stop"], json::array({"</done>"}));
    EXPECT_FALSE(body.contains("seed")) << "no seed unless one is given";
    CompletionRequest seeded = toolConversation();
    seeded.seed = 42;
    EXPECT_EQ(openAiChatRequestBody(seeded, "gpt-test")["seed"], 42);
    // A seed above the signed range OpenAI documents goes without its top bit, never negative.
    seeded.seed = 0x8000000000000007ULL;
    EXPECT_EQ(openAiChatRequestBody(seeded, "gpt-test")["seed"], 7);
    const json& m = body["messages"];
    ASSERT_EQ(m.size(), 7u);
    EXPECT_EQ(m[0], json({{"role", "system"}, {"content", "You optimise kernels."}}));
    EXPECT_EQ(m[3]["role"], "assistant");
    EXPECT_TRUE(m[3]["content"].is_null());
    EXPECT_EQ(m[3]["tool_calls"][0]["id"], "call_a");
    EXPECT_EQ(m[3]["tool_calls"][0]["type"], "function");
    EXPECT_EQ(m[3]["tool_calls"][0]["function"]["arguments"], R"({"target":"all"})");
    EXPECT_EQ(m[3]["tool_calls"][1]["function"]["arguments"], "not json"); // as the model wrote it
    EXPECT_EQ(m[5],
              json({{"role", "tool"}, {"tool_call_id", "call_b"}, {"content", "no such file"}}));
    EXPECT_EQ(body["tools"][0]["type"], "function");
    EXPECT_EQ(body["tools"][0]["function"]["name"], "compile");
    EXPECT_EQ(body["tools"][0]["function"]["parameters"]["properties"]["target"]["type"], "string");

    CompletionRequest whole;
    whole.stream = false;
    whole.messages = {Message::user("hi")};
    const json plain = openAiChatRequestBody(whole, "m");
    EXPECT_FALSE(plain.contains("stream_options"));
    EXPECT_FALSE(plain.contains("tools"));
    EXPECT_FALSE(plain.contains("max_tokens"));
}

TEST(AnthropicMessagesFormat, RequestBodyMergesTurnsAndLiftsTheSystemPrompt) {
    const json body = anthropicMessagesRequestBody(toolConversation(), "claude-test", 4096);
    EXPECT_EQ(body["system"], "You optimise kernels.\n\nBe brief.");
    EXPECT_EQ(body["max_tokens"], 256);
    EXPECT_EQ(body["stop_sequences"], json::array({"</done>"}));
    EXPECT_EQ(body["tools"][0]["input_schema"]["type"], "object");
    const json& m = body["messages"];
    ASSERT_EQ(m.size(), 3u) << m.dump(2);
    EXPECT_EQ(m[0]["role"], "user");
    EXPECT_EQ(m[1]["role"], "assistant");
    // No empty text block beside the tool calls; garbled arguments go out as {}.
    ASSERT_EQ(m[1]["content"].size(), 2u);
    EXPECT_EQ(m[1]["content"][0], json({{"type", "tool_use"},
                                        {"id", "call_a"},
                                        {"name", "compile"},
                                        {"input", {{"target", "all"}}}}));
    EXPECT_EQ(m[1]["content"][1]["input"], json::object());
    // Both tool results and the next user text share one user turn, results first.
    EXPECT_EQ(m[2]["role"], "user");
    ASSERT_EQ(m[2]["content"].size(), 3u);
    EXPECT_EQ(m[2]["content"][0]["type"], "tool_result");
    EXPECT_EQ(m[2]["content"][0]["tool_use_id"], "call_a");
    EXPECT_FALSE(m[2]["content"][0].contains("is_error"));
    EXPECT_EQ(m[2]["content"][1]["is_error"], true);
    EXPECT_EQ(m[2]["content"][2], json({{"type", "text"}, {"text", "And now?"}}));

    CompletionRequest noLimit;
    noLimit.messages = {Message::user("hi")};
    EXPECT_EQ(anthropicMessagesRequestBody(noLimit, "m", 1234)["max_tokens"], 1234);
    EXPECT_FALSE(anthropicMessagesRequestBody(noLimit, "m", 1234).contains("system"));
}

TEST(OpenAiChatFormat, StreamDecoderAccumulatesToolCallsByIndex) {
    RecordingSink sink;
    OpenAiChatStreamDecoder decoder(sink);
    const char* events[] = {
        R"({"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})",
        R"({"choices":[{"index":0,"delta":{"content":"Hi"}}]})",
        R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"b","arguments":""}}]}}]})",
        R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"a","arguments":"{\"x\""}}]}}]})",
        R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}}]})",
        R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]})",
        R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
        R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":2}}})",
    };
    for (const char* e : events)
        ASSERT_TRUE(decoder.onEvent(dataEvent(e))) << e;
    EXPECT_FALSE(decoder.onEvent(dataEvent("[DONE]")));
    ASSERT_TRUE(decoder.finished());
    ASSERT_FALSE(decoder.failure());
    CompletionResult result = decoder.takeResult();
    EXPECT_EQ(result.text, "Hi");
    EXPECT_EQ(result.model, "m1");
    ASSERT_EQ(result.toolCalls.size(), 2u);
    EXPECT_EQ(result.toolCalls[0], (ToolCall{"c2", "b", "{}"})); // numbered in order of arrival
    EXPECT_EQ(result.toolCalls[1], (ToolCall{"c1", "a", R"({"x":1})"}));
    EXPECT_EQ(result.stopReason, StopReason::ToolUse);
    EXPECT_EQ(result.usage, (TokenUsage{9, 4, 2}));
    EXPECT_EQ(sink.toolArguments[1], R"({"x":1})");
}

TEST(OpenAiChatFormat, ToolCallDeltasWithoutIndexAndFinishWithoutDone) {
    RecordingSink sink;
    OpenAiChatStreamDecoder decoder(sink);
    decoder.onEvent(dataEvent(
        R"({"choices":[{"delta":{"tool_calls":[{"id":"x1","function":{"name":"f","arguments":{"a":1}}}]}}]})"));
    decoder.onEvent(dataEvent(
        R"({"choices":[{"delta":{"tool_calls":[{"id":"x2","function":{"name":"g","arguments":"{}"}}]}}]})"));
    EXPECT_FALSE(decoder.finished());
    decoder.onEvent(dataEvent(R"({"choices":[{"delta":{},"finish_reason":"stop"}]})"));
    EXPECT_TRUE(decoder.finished());
    CompletionResult result = decoder.takeResult();
    ASSERT_EQ(result.toolCalls.size(), 2u);
    EXPECT_EQ(result.toolCalls[0].argumentsJson, R"({"a":1})");
    EXPECT_EQ(result.toolCalls[1].name, "g");
    EXPECT_EQ(result.stopReason, StopReason::ToolUse); // "stop" beside tool calls
    EXPECT_FALSE(result.usage);
}

TEST(OpenAiChatFormat, ErrorsInsideTheStreamOrBody) {
    RecordingSink sink;
    OpenAiChatStreamDecoder decoder(sink);
    EXPECT_FALSE(decoder.onEvent(
        dataEvent(R"({"error":{"message":"overloaded","type":"server_error","code":503}})")));
    ASSERT_TRUE(decoder.failure());
    EXPECT_EQ(decoder.failure()->kind, LlmErrorKind::Server);
    EXPECT_TRUE(decoder.failure()->retryable);

    OpenAiChatStreamDecoder typeConfused(sink);
    EXPECT_FALSE(typeConfused.onEvent(dataEvent(R"({"choices":[{"index":"zero"}]})")));
    ASSERT_TRUE(typeConfused.failure());
    EXPECT_EQ(typeConfused.failure()->kind, LlmErrorKind::MalformedResponse);

    auto outcome = parseOpenAiChatResponse(R"({"choices": []})");
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::MalformedResponse);
    outcome = parseOpenAiChatResponse(
        R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}})");
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::RateLimited);
    EXPECT_FALSE(outcome.error().retryable); // waiting does not buy credits
}

TEST(OpenAiChatFormat, NegativeOrOverflowingUsageIsClampedWhereItIsRead) {
    for (
        const auto& [event, expected] :
        {std::pair{R"({"choices":[],"usage":{"prompt_tokens":-5000000,"completion_tokens":-1000}})",
                   TokenUsage{0, 0, std::nullopt}},
         std::pair{
             R"({"choices":[],"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":9223372036854775807}}})",
             TokenUsage{TokenUsage::kMaxTokens, 3, TokenUsage::kMaxTokens}}}) {
        RecordingSink sink;
        OpenAiChatStreamDecoder decoder(sink);
        ASSERT_TRUE(decoder.onEvent(dataEvent(
            R"({"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]})")));
        ASSERT_TRUE(decoder.onEvent(dataEvent(event)));
        EXPECT_FALSE(decoder.onEvent(dataEvent("[DONE]")));
        EXPECT_EQ(decoder.takeResult().usage, expected) << event;
    }
}

TEST(AnthropicMessagesFormat, NegativeUsageIsClampedWhereItIsRead) {
    RecordingSink sink;
    AnthropicMessagesStreamDecoder decoder(sink);
    ASSERT_TRUE(decoder.onEvent(dataEvent(
        R"({"type":"message_start","message":{"model":"c","usage":{"input_tokens":-100000,"cache_read_input_tokens":100,"output_tokens":-4}}})")));
    EXPECT_FALSE(decoder.onEvent(dataEvent(
        R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":-12}})")));
    const auto usage = decoder.takeResult().usage;
    ASSERT_TRUE(usage);
    EXPECT_EQ(usage->inputTokens, 100);
    EXPECT_EQ(usage->outputTokens, 0);
    EXPECT_EQ(usage->cachedInputTokens, 100);
}

TEST(AnthropicMessagesFormat, StreamDecoderAndErrorEvents) {
    RecordingSink sink;
    AnthropicMessagesStreamDecoder decoder(sink);
    const char* events[] = {
        R"({"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":7,"output_tokens":1}}})",
        R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})",
        R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}})",
        R"({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})",
        R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Sure"}})",
        R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t1","name":"run","input":{}}})",
        R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\":"}})",
        R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"ls\"}"}})",
        R"({"type":"content_block_stop","index":2})",
        R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}})",
    };
    for (const char* e : events) {
        // Not finished until the stop reason: a stream cut before it lost part of the answer.
        EXPECT_FALSE(decoder.finished()) << e;
        // The stop reason's message_delta is the last event read: nothing after it is needed.
        const bool last = e == events[std::size(events) - 1];
        EXPECT_EQ(decoder.onEvent(dataEvent(e)), !last) << e;
    }
    // message_delta's stop reason ends the answer; message_stop only ends the stream.
    EXPECT_TRUE(decoder.finished());
    EXPECT_FALSE(decoder.onEvent(dataEvent(R"({"type":"message_stop"})")));
    ASSERT_TRUE(decoder.finished());
    CompletionResult result = decoder.takeResult();
    EXPECT_EQ(result.text, "Sure");
    ASSERT_EQ(result.toolCalls.size(), 1u);
    EXPECT_EQ(result.toolCalls[0], (ToolCall{"t1", "run", R"({"cmd":"ls"})"}));
    EXPECT_EQ(result.stopReason, StopReason::ToolUse);
    EXPECT_EQ(result.usage, (TokenUsage{112, 12, 100}));
    EXPECT_EQ(result.model, "claude-x");
    ASSERT_EQ(sink.toolStarts.size(), 1u);
    EXPECT_EQ(sink.toolStarts[0].index, 0); // the first tool call, whatever its block index

    AnthropicMessagesStreamDecoder failing(sink);
    EXPECT_FALSE(failing.onEvent(
        dataEvent(R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
                  "error")));
    ASSERT_TRUE(failing.failure());
    EXPECT_EQ(failing.failure()->kind, LlmErrorKind::Server);
    EXPECT_TRUE(failing.failure()->retryable);
    EXPECT_NE(failing.failure()->message.find("Overloaded"), std::string::npos);
}

TEST(AnthropicMessagesFormat, WholeResponse) {
    auto outcome = parseAnthropicMessagesResponse(R"({
        "type": "message", "model": "claude-x", "stop_reason": "max_tokens",
        "content": [{"type": "text", "text": "Part"}, {"type": "tool_use", "id": "t", "name": "n",
                     "input": {"k": [1, 2]}}],
        "usage": {"input_tokens": 3, "output_tokens": 4}})");
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_EQ(outcome.result().text, "Part");
    EXPECT_EQ(outcome.result().toolCalls[0].parsedArguments(), json({{"k", {1, 2}}}));
    EXPECT_EQ(outcome.result().stopReason, StopReason::MaxTokens);
    EXPECT_EQ(outcome.result().usage, (TokenUsage{3, 4, std::nullopt}));

    outcome = parseAnthropicMessagesResponse(
        R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})");
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::Auth);
    outcome = parseAnthropicMessagesResponse("<html>502 Bad Gateway</html>");
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::MalformedResponse);
}
