// The local model as the agent's provider, against a scripted stand-in for `kwb-model serve`
// (tests/agent/fake_model_worker.py): what goes over (the conversation and tools as OpenAI-style
// JSON), what comes back (tool calls, token ids, log-probabilities), and what happens when the
// process hangs, dies, talks nonsense or refuses. The real model's side runs in model.agent.
#include "agent/providers/local_model_provider.h"
#include "agent/providers/provider_factory.h"
#include "tests/agent/recording_sink.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace kwb::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::RecordingSink;

class LocalModelProviderTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kwb-local-provider-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Writes the script and returns a provider whose "model" it is.
    std::unique_ptr<LocalModelProvider> providerFor(const json& script) {
        model_ = (dir_ / "model.json").string();
        std::ofstream(model_) << script.dump();
        ProviderSettings settings = ProviderSettings::defaultsFor(ProviderKind::LocalModel);
        settings.model = model_;
        settings.localDevice = "cpu";
        return std::make_unique<LocalModelProvider>(settings, KWB_FAKE_MODEL_WORKER);
    }

    std::vector<json> requests() const {
        std::vector<json> out;
        std::ifstream in(model_ + ".requests.jsonl");
        for (std::string line; std::getline(in, line);)
            out.push_back(json::parse(line));
        return out;
    }
    int starts() const {
        std::ifstream in(model_ + ".starts");
        int count = 0;
        for (std::string line; std::getline(in, line);)
            ++count;
        return count;
    }

    static json sample(const std::string& text) {
        return {{"sample",
                 {{"text", text},
                  {"content", text},
                  {"tool_calls", json::array()},
                  {"tokens", {7, 8}},
                  {"logprobs", {-0.5, -0.25}},
                  {"token_texts", {"a", "b"}},
                  {"stop_reason", "stop_token"}}}};
    }

    static CompletionRequest conversation() {
        CompletionRequest request;
        request.messages = {Message::system("You optimise kernels."), Message::user("Go."),
                            Message::assistant("", {{"c1", "run_command", R"({"command":"ls"})"}}),
                            Message::toolResult("c1", "model.py")};
        request.tools = {
            {"run_command", "Runs a command.",
             json::parse(R"({"type":"object","properties":{"command":{"type":"string"}}})")}};
        request.maxTokens = 256;
        request.stop = {"</answer>"};
        request.logprobs = true;
        return request;
    }

    fs::path dir_;
    std::string model_;
};

TEST_F(LocalModelProviderTest, ToolCallsComeBackAsTheAgentsCallsWithTheirTokens) {
    json reply = sample("Listing.\n<tool_call>...</tool_call>");
    reply["sample"]["content"] = "Listing.";
    reply["sample"]["tool_calls"] = {
        {{"name", "run_command"}, {"arguments", R"({"command":"ls -l"})"}},
        {{"name", "evaluate"}, {"arguments", "{}"}}};
    auto provider = providerFor({{"replies", {reply}}});
    RecordingSink sink;
    const CompletionOutcome outcome = provider->complete(conversation(), sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    const CompletionResult& result = outcome.result();
    EXPECT_EQ(result.text, "Listing.");
    ASSERT_EQ(result.toolCalls.size(), 2u);
    EXPECT_EQ(result.toolCalls[0].name, "run_command");
    EXPECT_EQ(result.toolCalls[0].argumentsJson, R"({"command":"ls -l"})");
    EXPECT_EQ(result.toolCalls[1].name, "evaluate");
    EXPECT_NE(result.toolCalls[0].id, result.toolCalls[1].id);
    EXPECT_EQ(result.stopReason, StopReason::ToolUse);
    ASSERT_TRUE(result.usage);
    EXPECT_EQ(result.usage->inputTokens, 3);
    EXPECT_EQ(result.usage->outputTokens, 2);
    ASSERT_EQ(result.tokens.size(), 2u);
    EXPECT_EQ(result.tokens[0].id, 7);
    EXPECT_EQ(result.tokens[1].logprob, -0.25);
    EXPECT_EQ(result.tokens[1].token, "b");
    // The sink saw the reply once, as for a non-streamed API answer.
    EXPECT_EQ(sink.text, "Listing.");
    ASSERT_EQ(sink.toolStarts.size(), 2u);
    EXPECT_EQ(sink.toolStarts[0].id, result.toolCalls[0].id);
    EXPECT_EQ(sink.toolArguments[0], R"({"command":"ls -l"})");

    // What went over: the conversation and tools as OpenAI-style JSON, the earlier call kept.
    const auto sent = requests();
    ASSERT_EQ(sent.size(), 1u);
    const json& r = sent[0];
    EXPECT_EQ(r["op"], "sample");
    EXPECT_EQ(r["count"], 1);
    EXPECT_EQ(r["max_tokens"], 256);
    EXPECT_EQ(r["temperature"], 1.0) << "the policy's own distribution, as PPO needs";
    EXPECT_EQ(r["stop"], json::array({"</answer>"}));
    EXPECT_EQ(r["token_texts"], true);
    ASSERT_EQ(r["messages"].size(), 4u);
    EXPECT_EQ(r["messages"][2]["tool_calls"][0]["function"]["name"], "run_command");
    EXPECT_EQ(r["messages"][3]["role"], "tool");
    EXPECT_EQ(r["tools"][0]["function"]["name"], "run_command");
}

TEST_F(LocalModelProviderTest, ConsecutiveCallsDrawWithDifferentSeedsFromOneProcess) {
    auto provider = providerFor({{"replies", {sample("one"), sample("two")}}});
    RecordingSink sink;
    CompletionRequest request;
    request.messages = {Message::user("hi")};
    ASSERT_TRUE(provider->complete(request, sink, {}).ok());
    const CompletionOutcome second = provider->complete(request, sink, {});
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(second.result().text, "two");
    EXPECT_EQ(second.result().stopReason, StopReason::EndTurn);
    EXPECT_TRUE(second.result().tokens.empty()) << "no log-probabilities were asked for";
    const auto sent = requests();
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_NE(sent[0]["seed"], sent[1]["seed"]);
    EXPECT_FALSE(sent[0].contains("tools"));
    EXPECT_EQ(starts(), 1);
}

TEST_F(LocalModelProviderTest, AStopEndsAHungGenerationAndTheNextCallStartsAfresh) {
    auto provider = providerFor({{"replies", {{{"sleep", 60}}, sample("after the stop")}}});
    std::stop_source stop;
    // Stops once the fake has the request (it logs it before sleeping): a fixed delay raced a
    // slow start under CI's load, the stop then ended the loading instead, and the next call
    // drew the sleeping step.
    const std::string requestLog = model_ + ".requests.jsonl";
    std::jthread stopper([&stop, requestLog] {
        const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (!fs::exists(requestLog) && std::chrono::steady_clock::now() < giveUp)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        stop.request_stop();
    });
    RecordingSink sink;
    CompletionRequest request;
    request.messages = {Message::user("hi")};
    const auto started = std::chrono::steady_clock::now();
    const CompletionOutcome cancelled = provider->complete(request, sink, stop.get_token());
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().kind, LlmErrorKind::Cancelled);
    // The fake sleeps for a minute: returning well before shows the process was ended.
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(50));
    ASSERT_EQ(requests().size(), 1u) << "the stop came before the request reached the model";

    const CompletionOutcome next = provider->complete(request, sink, {});
    ASSERT_TRUE(next.ok()) << next.error().describe();
    EXPECT_EQ(next.result().text, "after the stop");
    EXPECT_EQ(starts(), 2);
}

TEST_F(LocalModelProviderTest, ADeadOrBabblingProcessIsARetryableErrorAndIsReplaced) {
    auto provider = providerFor(
        {{"replies", {{{"crash", 3}}, {{"garbage", "Segmentation fault"}}, sample("fine")}}});
    RecordingSink sink;
    CompletionRequest request;
    request.messages = {Message::user("hi")};
    const CompletionOutcome crashed = provider->complete(request, sink, {});
    ASSERT_FALSE(crashed.ok());
    EXPECT_EQ(crashed.error().kind, LlmErrorKind::Server);
    EXPECT_TRUE(crashed.error().retryable);
    const CompletionOutcome babbled = provider->complete(request, sink, {});
    ASSERT_FALSE(babbled.ok());
    EXPECT_EQ(babbled.error().kind, LlmErrorKind::Server);
    EXPECT_NE(babbled.error().message.find("not JSON"), std::string::npos);
    const CompletionOutcome fine = provider->complete(request, sink, {});
    ASSERT_TRUE(fine.ok()) << fine.error().describe();
    EXPECT_EQ(starts(), 3);
}

TEST_F(LocalModelProviderTest, RefusalsKeepTheirKindAndTheProcess) {
    auto provider = providerFor(
        {{"replies",
          {{{"error", "the conversation is 9000 tokens"}, {"error_kind", "context_too_long"}},
           {{"error", "each message needs a role"}},
           sample("fine")}}});
    RecordingSink sink;
    CompletionRequest request;
    request.messages = {Message::user("hi")};
    const CompletionOutcome tooLong = provider->complete(request, sink, {});
    ASSERT_FALSE(tooLong.ok());
    EXPECT_EQ(tooLong.error().kind, LlmErrorKind::ContextTooLong);
    const CompletionOutcome refused = provider->complete(request, sink, {});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().kind, LlmErrorKind::InvalidRequest);
    EXPECT_FALSE(refused.error().retryable);
    EXPECT_TRUE(provider->complete(request, sink, {}).ok());
    EXPECT_EQ(starts(), 1) << "a refusal leaves the process as it was";
}

TEST_F(LocalModelProviderTest, AModelThatDoesNotLoadSaysWhy) {
    auto provider =
        providerFor({{"load", "no such architecture: mamba"}, {"replies", json::array()}});
    RecordingSink sink;
    CompletionRequest request;
    request.messages = {Message::user("hi")};
    const CompletionOutcome outcome = provider->complete(request, sink, {});
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::InvalidRequest);
    EXPECT_NE(outcome.error().message.find("no such architecture: mamba"), std::string::npos);
    EXPECT_NE(provider->describe().find(model_), std::string::npos);
}

TEST_F(LocalModelProviderTest, TheFactoryRetriesThroughACrash) {
    model_ = (dir_ / "model.json").string();
    std::ofstream(model_) << json({{"replies", {{{"crash", 9}}, sample("second try")}}}).dump();
    ::setenv("KWB_MODEL_WORKER", KWB_FAKE_MODEL_WORKER, 1);
    ProviderSettings settings = ProviderSettings::defaultsFor(ProviderKind::LocalModel);
    settings.model = model_;
    settings.localDevice = "cpu";
    auto provider =
        makeProvider(settings, [](std::chrono::milliseconds, std::stop_token) { return true; });
    ::unsetenv("KWB_MODEL_WORKER");
    RecordingSink sink;
    CompletionRequest request;
    request.messages = {Message::user("hi")};
    const CompletionOutcome outcome = provider->complete(request, sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_EQ(outcome.result().text, "second try");
    EXPECT_EQ(outcome.result().attempts, 2);
    EXPECT_EQ(parseProviderKind("local"), ProviderKind::LocalModel);
    EXPECT_EQ(providerKindName(ProviderKind::LocalModel), "local");
}

} // namespace
} // namespace kwb::agent
