// The providers against the scripted server, both APIs, streamed and whole.
#include "agent/llm/llm_provider.h"
#include "tests/agent/provider_test_support.h"
#include "tests/agent/recording_sink.h"

#include <gtest/gtest.h>

using namespace kwb::agent;
using namespace kwb::agent::test_support;
using nlohmann::json;

namespace {

class LlmProviderTest : public ::testing::TestWithParam<Api> {
protected:
    std::unique_ptr<ScriptedLlmServer> server;
    RecordedWaits waits;

    std::unique_ptr<LlmProvider> start(const json& script) {
        server = std::make_unique<ScriptedLlmServer>(script);
        if (!server->started())
            return nullptr;
        return makeProvider(settingsFor(GetParam(), *server), waits.sleeper());
    }
};

INSTANTIATE_TEST_SUITE_P(Apis, LlmProviderTest, ::testing::Values(Api::OpenAi, Api::Anthropic),
                         apiName);

const json kToolTurns = {
    {"turns",
     {{{"text", "Let me look."},
       {"tool_calls",
        {{{"id", "call_1"}, {"name", "read_file"}, {"arguments", {{"path", "kernels/gemm.cu"}}}},
         {{"id", "call_2"},
          {"name", "compile"},
          {"arguments", {{"flags", {"-O3", "-arch=sm_90"}}, {"verbose", true}}}}}},
       {"usage", {{"input", 120}, {"output", 40}, {"cached", 100}}}},
      {{"text", "The build is fine."}, {"usage", {{"input", 200}, {"output", 6}}}}}}};

} // namespace

TEST_P(LlmProviderTest, StreamsTextDeltasWithUsage) {
    auto provider = start({{"turns",
                            {{{"text", "Hello from the scripted server, streamed."},
                              {"usage", {{"input", 42}, {"output", 7}, {"cached", 10}}}}}}});
    ASSERT_TRUE(provider) << server->startError();
    RecordingSink sink;
    auto outcome = provider->complete(userAsks("Say hello."), sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    const CompletionResult& result = outcome.result();
    EXPECT_EQ(result.text, "Hello from the scripted server, streamed.");
    EXPECT_EQ(sink.text, result.text);
    EXPECT_GT(sink.textDeltas, 3);
    EXPECT_EQ(result.stopReason, StopReason::EndTurn);
    EXPECT_EQ(result.usage, (TokenUsage{42, 7, 10}));
    EXPECT_EQ(result.model, "test-model");
    EXPECT_EQ(result.attempts, 1);
    EXPECT_TRUE(result.toolCalls.empty());

    const auto requests = server->requests();
    ASSERT_EQ(requests.size(), 1u);
    const json& logged = requests[0];
    EXPECT_EQ(logged["path"], endpointPath(GetParam()));
    EXPECT_TRUE(logged["problem"].is_null()) << logged["problem"];
    expectKeyOnlyInTheAuthHeader(GetParam(), logged);
    const json& body = logged["body"];
    EXPECT_EQ(body["model"], "test-model");
    EXPECT_EQ(body["stream"], true);
    if (GetParam() == Api::OpenAi) {
        EXPECT_EQ(body["stream_options"]["include_usage"], true);
        EXPECT_EQ(body["messages"][0]["role"], "system");
    } else {
        EXPECT_EQ(body["system"], "You are a test.");
        EXPECT_EQ(body["messages"].size(), 1u);
        EXPECT_EQ(body["max_tokens"], 4096);
    }
}

TEST_P(LlmProviderTest, WholeResponsesReachTheSinkInOnePiece) {
    auto provider =
        start({{"turns",
                {{{"text", "Not streamed at all."}, {"usage", {{"input", 11}, {"output", 4}}}}}}});
    ASSERT_TRUE(provider) << server->startError();
    RecordingSink sink;
    auto outcome = provider->complete(userAsks("Hi", /*stream=*/false), sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_EQ(outcome.result().text, "Not streamed at all.");
    EXPECT_EQ(sink.text, "Not streamed at all.");
    EXPECT_EQ(sink.textDeltas, 1);
    EXPECT_EQ(outcome.result().stopReason, StopReason::EndTurn);
    EXPECT_EQ(outcome.result().usage, (TokenUsage{11, 4, std::nullopt})); // no cache reported
    const auto requests = server->requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0]["body"]["stream"], false);
    EXPECT_FALSE(requests[0]["body"].contains("stream_options"));
    expectKeyOnlyInTheAuthHeader(GetParam(), requests[0]);
}

TEST_P(LlmProviderTest, ToolCallRoundTripStreamedAndWhole) {
    for (bool stream : {true, false}) {
        SCOPED_TRACE(stream ? "streamed" : "whole");
        auto provider = start(kToolTurns);
        ASSERT_TRUE(provider) << server->startError();
        CompletionRequest request = userAsks("Is the build fine?", stream);
        request.tools = {{"read_file",
                          "Reads a workspace file",
                          {{"type", "object"},
                           {"properties", {{"path", {{"type", "string"}}}}},
                           {"required", {"path"}}}},
                         {"compile", "Builds the extension", {{"type", "object"}}}};
        RecordingSink sink;
        auto first = provider->complete(request, sink, {});
        ASSERT_TRUE(first.ok()) << first.error().describe();
        const CompletionResult& asked = first.result();
        EXPECT_EQ(asked.text, "Let me look.");
        EXPECT_EQ(asked.stopReason, StopReason::ToolUse);
        ASSERT_EQ(asked.toolCalls.size(), 2u);
        EXPECT_EQ(asked.toolCalls[0].id, "call_1");
        EXPECT_EQ(asked.toolCalls[0].name, "read_file");
        EXPECT_EQ(asked.toolCalls[0].parsedArguments(), json({{"path", "kernels/gemm.cu"}}));
        EXPECT_EQ(asked.toolCalls[1].parsedArguments(),
                  json({{"flags", {"-O3", "-arch=sm_90"}}, {"verbose", true}}));
        ASSERT_EQ(sink.toolStarts.size(), 2u);
        EXPECT_EQ(sink.toolStarts[1].id, "call_2");
        EXPECT_EQ(sink.toolStarts[1].name, "compile");
        EXPECT_EQ(json::parse(sink.toolArguments[1]), asked.toolCalls[1].parsedArguments());

        request.messages.push_back(Message::assistant(asked.text, asked.toolCalls));
        request.messages.push_back(Message::toolResult("call_1", "__global__ void gemm() {}"));
        request.messages.push_back(Message::toolResult("call_2", "nvcc: error", true));
        RecordingSink second;
        auto next = provider->complete(request, second, {});
        ASSERT_TRUE(next.ok()) << next.error().describe();
        EXPECT_EQ(next.result().text, "The build is fine.");
        EXPECT_EQ(next.result().stopReason, StopReason::EndTurn);

        const auto requests = server->requests();
        ASSERT_EQ(requests.size(), 2u);
        for (const auto& logged : requests)
            EXPECT_TRUE(logged["problem"].is_null()) << logged["problem"];
        const json& body = requests[1]["body"];
        if (GetParam() == Api::OpenAi) {
            EXPECT_EQ(requests[0]["body"]["tools"][0]["function"]["name"], "read_file");
            const json& m = body["messages"];
            ASSERT_EQ(m.size(), 5u);
            EXPECT_EQ(m[2]["role"], "assistant");
            EXPECT_EQ(m[2]["content"], "Let me look.");
            EXPECT_EQ(m[2]["tool_calls"][1]["id"], "call_2");
            EXPECT_EQ(
                json::parse(m[2]["tool_calls"][1]["function"]["arguments"].get<std::string>()),
                asked.toolCalls[1].parsedArguments());
            EXPECT_EQ(m[3], json({{"role", "tool"},
                                  {"tool_call_id", "call_1"},
                                  {"content", "__global__ void gemm() {}"}}));
            EXPECT_EQ(m[4]["tool_call_id"], "call_2");
        } else {
            EXPECT_EQ(requests[0]["body"]["tools"][0]["input_schema"]["required"][0], "path");
            const json& m = body["messages"];
            ASSERT_EQ(m.size(), 3u);
            EXPECT_EQ(m[1]["content"][0], json({{"type", "text"}, {"text", "Let me look."}}));
            EXPECT_EQ(m[1]["content"][2]["type"], "tool_use");
            EXPECT_EQ(m[1]["content"][2]["input"], asked.toolCalls[1].parsedArguments());
            EXPECT_EQ(m[2]["content"][0]["tool_use_id"], "call_1");
            EXPECT_EQ(m[2]["content"][1]["is_error"], true);
        }
    }
}

TEST_P(LlmProviderTest, UsageAddsUpAcrossTurns) {
    auto provider = start(kToolTurns);
    ASSERT_TRUE(provider) << server->startError();
    NullStreamSink sink;
    TokenUsage total;
    CompletionRequest request = userAsks("Go.");
    auto first = provider->complete(request, sink, {});
    ASSERT_TRUE(first.ok()) << first.error().describe();
    ASSERT_TRUE(first.result().usage);
    EXPECT_EQ(*first.result().usage, (TokenUsage{120, 40, 100}));
    total += *first.result().usage;
    request.messages.push_back(Message::assistant(first.result().text, first.result().toolCalls));
    request.messages.push_back(Message::toolResult("call_1", "a"));
    request.messages.push_back(Message::toolResult("call_2", "b"));
    auto second = provider->complete(request, sink, {});
    ASSERT_TRUE(second.ok()) << second.error().describe();
    ASSERT_TRUE(second.result().usage);
    total += *second.result().usage;
    EXPECT_EQ(total.inputTokens, 320);
    EXPECT_EQ(total.outputTokens, 46);
    EXPECT_EQ(total.cachedInputTokens, 100);
}

TEST_P(LlmProviderTest, RequestOptionsAndExtraHeadersGoOnTheWire) {
    server = std::make_unique<ScriptedLlmServer>(json{{"turns", {{{"text", "ok"}}}}});
    ASSERT_TRUE(server->started()) << server->startError();
    ProviderSettings settings = settingsFor(GetParam(), *server);
    settings.extraHeaders = {{"X-Trace-Id", "trace-77"}};
    auto provider = makeProvider(settings, waits.sleeper());
    CompletionRequest request = userAsks("Hi");
    request.model = "override-model";
    request.maxTokens = 99;
    request.temperature = 0.25;
    request.stop = {"STOP"};
    NullStreamSink sink;
    auto outcome = provider->complete(request, sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_EQ(outcome.result().model, "override-model");
    const json logged = server->requests().at(0);
    EXPECT_EQ(logged["headers"]["x-trace-id"], "trace-77");
    EXPECT_EQ(logged["headers"]["content-type"], "application/json");
    EXPECT_EQ(logged["body"]["model"], "override-model");
    EXPECT_EQ(logged["body"]["max_tokens"], 99);
    EXPECT_EQ(logged["body"]["temperature"], 0.25);
    EXPECT_EQ(logged["body"][GetParam() == Api::OpenAi ? "stop" : "stop_sequences"],
              json::array({"STOP"}));
}
