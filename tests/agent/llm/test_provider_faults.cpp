// The providers against the scripted server's faults: retries, clear errors, cancellation, and
// a key that never shows.
#include "agent/llm/llm_provider.h"
#include "tests/agent/provider_test_support.h"
#include "tests/agent/recording_sink.h"

#include <future>
#include <gtest/gtest.h>
#include <thread>

using namespace kwb::agent;
using namespace kwb::agent::test_support;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

class ProviderFaultTest : public ::testing::TestWithParam<Api> {
protected:
    std::unique_ptr<ScriptedLlmServer> server;
    RecordedWaits waits;

    bool serve(const json& turns) {
        server = std::make_unique<ScriptedLlmServer>(json{{"turns", turns}});
        return server->started();
    }
    std::unique_ptr<LlmProvider> provider(ProviderSettings settings) {
        return makeProvider(settings, waits.sleeper());
    }
    std::unique_ptr<LlmProvider> provider() { return provider(settingsFor(GetParam(), *server)); }

    // Events before the first text delta in the scripted server's streams.
    int eventsBeforeText() const { return GetParam() == Api::OpenAi ? 1 : 3; }
};

INSTANTIATE_TEST_SUITE_P(Apis, ProviderFaultTest, ::testing::Values(Api::OpenAi, Api::Anthropic),
                         apiName);

const std::string kAnswer = "one two three four five six seven eight";

json turnWithFault(const json& fault) {
    return json::array({{{"text", kAnswer}, {"fault", fault}}});
}

void expectNoKey(const LlmError& error) {
    EXPECT_EQ(error.message.find(kTestKey), std::string::npos) << error.message;
    EXPECT_EQ(error.describe().find(kTestKey), std::string::npos);
}

} // namespace

TEST_P(ProviderFaultTest, RateLimitedThenSucceedsAfterRetryAfter) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "http_429"}, {"retry_after", 7}})))
        << server->startError();
    RecordingSink sink;
    auto outcome = provider()->complete(userAsks("Hi"), sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_EQ(outcome.result().text, kAnswer);
    EXPECT_EQ(outcome.result().attempts, 2);
    ASSERT_EQ(waits.delays.size(), 1u);
    EXPECT_GE(waits.delays[0], 7s); // Retry-After honoured
    ASSERT_EQ(sink.retries.size(), 1u);
    EXPECT_EQ(sink.retries[0].reason.kind, LlmErrorKind::RateLimited);
    EXPECT_EQ(sink.retries[0].reason.httpStatus, 429);
    EXPECT_EQ(sink.retries[0].reason.retryAfter, 7s);
    EXPECT_EQ(sink.text, kAnswer); // the failed attempt left nothing behind
    const auto requests = server->requests();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[0]["fault"], "http_429");
    EXPECT_TRUE(requests[1]["fault"].is_null());
}

TEST_P(ProviderFaultTest, ARealRetryAfterIsWaited) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "http_429"}, {"retry_after", 1}})))
        << server->startError();
    auto real = makeProvider(settingsFor(GetParam(), *server)); // the real, sleeping wait
    NullStreamSink sink;
    const auto start = std::chrono::steady_clock::now();
    auto outcome = real->complete(userAsks("Hi"), sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_GE(std::chrono::steady_clock::now() - start, 950ms);
}

TEST_P(ProviderFaultTest, ARetryAfterOfMinutesIsWaitedOut) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "http_429"}, {"retry_after", 150}})))
        << server->startError();
    RecordingSink sink;
    auto outcome = provider()->complete(userAsks("Hi"), sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_EQ(outcome.result().text, kAnswer);
    ASSERT_EQ(waits.delays.size(), 1u);
    EXPECT_GE(waits.delays[0], 150s);
    ASSERT_EQ(sink.retries.size(), 1u); // the wait is announced, so a watcher sees why
    EXPECT_EQ(sink.retries[0].delay, waits.delays[0]);
}

// 18446744073709552 s overflowed the seconds-to-milliseconds conversion and wrapped to a short
// wait; it is a wait far too long, so the provider gives up at once as for any such wait.
TEST_P(ProviderFaultTest, AnOverflowingRetryAfterGivesUpInsteadOfWrapping) {
    for (const long long seconds : {18446744073709552LL, 9223372036854776LL, 999999LL}) {
        SCOPED_TRACE(seconds);
        ASSERT_TRUE(serve(turnWithFault({{"kind", "http_429"}, {"retry_after", seconds}})))
            << server->startError();
        waits.delays.clear();
        RecordingSink sink;
        auto outcome = provider()->complete(userAsks("Hi"), sink, {});
        ASSERT_FALSE(outcome.ok());
        EXPECT_EQ(outcome.error().kind, LlmErrorKind::RateLimited);
        EXPECT_TRUE(outcome.error().message.find("the server asks to wait") != std::string::npos)
            << outcome.error().message;
        ASSERT_TRUE(outcome.error().retryAfter);
        EXPECT_GT(*outcome.error().retryAfter, std::chrono::hours(24));
        EXPECT_TRUE(waits.delays.empty());
        EXPECT_EQ(server->requests().size(), 1u);
    }
}

// Keep-alive comments are no progress: a stream that sends nothing else times out after the idle
// timeout and is retried, instead of lasting the whole request timeout.
TEST_P(ProviderFaultTest, AKeepAliveTrickleTimesOutAtTheIdleTimeout) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "trickle"}, {"seconds", 30}})))
        << server->startError();
    ProviderSettings settings = settingsFor(GetParam(), *server);
    settings.idleTimeout = std::chrono::seconds(1);
    RecordingSink sink;
    const auto start = std::chrono::steady_clock::now();
    auto outcome = provider(settings)->complete(userAsks("Hi"), sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_EQ(outcome.result().text, kAnswer);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
    ASSERT_EQ(sink.retries.size(), 1u);
    EXPECT_EQ(sink.retries[0].reason.kind, LlmErrorKind::Timeout);
    EXPECT_NE(sink.retries[0].reason.message.find("keep-alive"), std::string::npos)
        << sink.retries[0].reason.message;
}

// A complete answer is used at once, though the server holds the connection open after its end
// marker (or, for Anthropic, after the stop reason without message_stop).
TEST_P(ProviderFaultTest, ACompleteAnswerIsUsedAtOnceThoughTheConnectionStaysOpen) {
    for (const bool dropEnd : {false, true}) {
        if (dropEnd && GetParam() == Api::OpenAi)
            continue; // without [DONE], the usage chunk may still come: the idle timeout decides
        ASSERT_TRUE(
            serve(turnWithFault({{"kind", "hold_open"}, {"seconds", 30}, {"drop_end", dropEnd}})))
            << server->startError();
        RecordingSink sink;
        const auto start = std::chrono::steady_clock::now();
        auto outcome = provider()->complete(userAsks("Hi"), sink, {});
        ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
        EXPECT_EQ(outcome.result().text, kAnswer);
        EXPECT_EQ(outcome.result().attempts, 1);
        EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "drop_end " << dropEnd;
    }
}

TEST_P(ProviderFaultTest, AStreamThatLosesOnlyItsEndMarkerIsTheWholeAnswer) {
    // Anthropic: message_delta carried the stop reason, message_stop never came; OpenAI: the
    // finish_reason and usage came, [DONE] never did.
    for (bool graceful : {false, true}) {
        SCOPED_TRACE(graceful ? "ended cleanly" : "connection dropped");
        ASSERT_TRUE(serve(
            turnWithFault({{"kind", "cut_stream"}, {"after_events", -1}, {"graceful", graceful}})))
            << server->startError();
        RecordingSink sink;
        auto outcome = provider()->complete(userAsks("Hi"), sink, {});
        ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
        EXPECT_EQ(outcome.result().text, kAnswer);
        EXPECT_EQ(outcome.result().attempts, 1);
        EXPECT_EQ(outcome.result().stopReason, StopReason::EndTurn);
        EXPECT_TRUE(sink.retries.empty());
        EXPECT_EQ(server->requests().size(), 1u);
    }
}

TEST_P(ProviderFaultTest, AReplyCutByTheTokenLimitSaysSo) {
    for (bool stream : {true, false}) {
        SCOPED_TRACE(stream ? "streamed" : "whole");
        ASSERT_TRUE(serve(json::array({{{"text", kAnswer}, {"stop", "max_tokens"}}})))
            << server->startError();
        NullStreamSink sink;
        auto outcome = provider()->complete(userAsks("Hi", stream), sink, {});
        ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
        EXPECT_EQ(outcome.result().stopReason, StopReason::MaxTokens);
        EXPECT_EQ(outcome.result().rawStopReason,
                  GetParam() == Api::OpenAi ? "length" : "max_tokens");
    }
}

TEST_P(ProviderFaultTest, SampledTokensAndTheirLogprobsComeBackWhenAskedFor) {
    if (GetParam() == Api::Anthropic) {
        // The Messages API has no log-probabilities: the request stays valid, none come back.
        ASSERT_TRUE(serve(json::array({{{"text", "one two three"}}}))) << server->startError();
        CompletionRequest request = userAsks("Hi");
        request.logprobs = true;
        NullStreamSink sink;
        auto outcome = provider()->complete(request, sink, {});
        ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
        EXPECT_TRUE(outcome.result().tokens.empty());
        EXPECT_FALSE(server->requests().back()["body"].contains("logprobs"));
        return;
    }
    for (bool stream : {true, false})
        for (bool ids : {false, true}) {
            SCOPED_TRACE(std::string(stream ? "streamed" : "whole") + (ids ? ", ids" : ""));
            ASSERT_TRUE(serve(json::array({{{"text", "one two three"}}}))) << server->startError();
            CompletionRequest request = userAsks("Hi", stream);
            request.logprobs = true;
            request.tokenIds = ids;
            NullStreamSink sink;
            auto outcome = provider()->complete(request, sink, {});
            ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
            const auto& tokens = outcome.result().tokens;
            ASSERT_EQ(tokens.size(), 3u);
            EXPECT_EQ(tokens[1].logprob, -0.5);
            if (ids) {
                EXPECT_EQ(tokens[2].token, "token_id:1002");
                EXPECT_EQ(tokens[2].id, 1002);
            } else {
                EXPECT_EQ(tokens[1].token, "two ");
                EXPECT_FALSE(tokens[1].id);
            }
            const json body = server->requests().back()["body"];
            EXPECT_EQ(body["logprobs"], true);
            EXPECT_EQ(body.value("return_tokens_as_token_ids", false), ids);
        }
    // Not asked: none asked for, none kept.
    ASSERT_TRUE(serve(json::array({{{"text", "one two"}}}))) << server->startError();
    NullStreamSink sink;
    auto plain = provider()->complete(userAsks("Hi"), sink, {});
    ASSERT_TRUE(plain.ok());
    EXPECT_TRUE(plain.result().tokens.empty());
    EXPECT_FALSE(server->requests().back()["body"].contains("logprobs"));
}

TEST_P(ProviderFaultTest, AContextOverflowIsItsOwnKindAndNotRetried) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "context_overflow"}}))) << server->startError();
    RecordingSink sink;
    auto outcome = provider()->complete(userAsks("Hi"), sink, {});
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::ContextTooLong) << outcome.error().describe();
    EXPECT_EQ(outcome.error().attempts, 1); // the same request would overflow again
    EXPECT_EQ(outcome.error().httpStatus, 400);
    EXPECT_TRUE(waits.delays.empty());
    EXPECT_EQ(errorKindName(outcome.error().kind), "context_too_long");
}

TEST_P(ProviderFaultTest, ServerErrorThenSucceeds) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "http_500"}}))) << server->startError();
    RecordingSink sink;
    auto outcome = provider()->complete(userAsks("Hi"), sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_EQ(outcome.result().text, kAnswer);
    EXPECT_EQ(outcome.result().attempts, 2);
    ASSERT_EQ(sink.retries.size(), 1u);
    EXPECT_EQ(sink.retries[0].reason.kind, LlmErrorKind::Server);
    EXPECT_NE(sink.retries[0].reason.message.find("internal server error"), std::string::npos);
    ASSERT_EQ(waits.delays.size(), 1u);
    EXPECT_LE(waits.delays[0], 10ms); // the first backoff step
}

TEST_P(ProviderFaultTest, GivesUpAfterMaxAttemptsThenTheTurnIsStillThere) {
    const json fault = {{"kind", "http_500"}, {"status", 503}};
    ASSERT_TRUE(serve(json::array({{{"text", kAnswer}, {"faults", {fault, fault, fault}}}})))
        << server->startError();
    auto llm = provider();
    NullStreamSink sink;
    auto outcome = llm->complete(userAsks("Hi"), sink, {});
    ASSERT_FALSE(outcome.ok());
    const LlmError& error = outcome.error();
    EXPECT_EQ(error.kind, LlmErrorKind::Server);
    EXPECT_EQ(error.attempts, 3);
    EXPECT_EQ(error.httpStatus, 503);
    EXPECT_NE(error.message.find("gave up after 3 attempts"), std::string::npos) << error.message;
    EXPECT_NE(error.message.find(server->url(endpointPath(GetParam()))), std::string::npos)
        << error.message;
    EXPECT_EQ(waits.delays.size(), 2u);
    EXPECT_LT(waits.delays[0], waits.delays[1]); // exponential (jitter is at most 25 %)
    EXPECT_EQ(server->requests().size(), 3u);
    expectNoKey(error);

    auto again = llm->complete(userAsks("Hi"), sink, {});
    ASSERT_TRUE(again.ok()) << again.error().describe();
    EXPECT_EQ(again.result().text, kAnswer);
}

TEST_P(ProviderFaultTest, MalformedJsonIsAClearErrorNotACrash) {
    for (bool stream : {true, false}) {
        SCOPED_TRACE(stream ? "streamed" : "whole");
        ASSERT_TRUE(serve(turnWithFault({{"kind", "malformed_json"}}))) << server->startError();
        auto llm = provider();
        RecordingSink sink;
        auto outcome = llm->complete(userAsks("Hi", stream), sink, {});
        ASSERT_FALSE(outcome.ok());
        EXPECT_EQ(outcome.error().kind, LlmErrorKind::MalformedResponse);
        EXPECT_EQ(outcome.error().attempts, 1); // not retried: the server speaks another format
        EXPECT_NE(outcome.error().message.find("malformed response"), std::string::npos)
            << outcome.error().message;
        EXPECT_NE(outcome.error().message.find(server->url()), std::string::npos);
        EXPECT_TRUE(sink.text.empty());
        expectNoKey(outcome.error());
        EXPECT_EQ(server->requests().size(), 1u);

        auto next = llm->complete(userAsks("Hi", stream), sink, {});
        ASSERT_TRUE(next.ok()) << next.error().describe();
        EXPECT_EQ(next.result().text, kAnswer);
    }
}

TEST_P(ProviderFaultTest, AStreamCutBeforeAnyOutputIsRetried) {
    for (bool graceful : {false, true}) {
        SCOPED_TRACE(graceful ? "ended cleanly" : "connection dropped");
        ASSERT_TRUE(serve(turnWithFault({{"kind", "cut_stream"},
                                         {"after_events", eventsBeforeText()},
                                         {"graceful", graceful}})))
            << server->startError();
        RecordingSink sink;
        auto outcome = provider()->complete(userAsks("Hi"), sink, {});
        ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
        EXPECT_EQ(outcome.result().attempts, 2);
        EXPECT_EQ(sink.text, kAnswer); // once, not a repeated prefix
        ASSERT_EQ(sink.retries.size(), 1u);
        EXPECT_EQ(sink.retries[0].reason.kind, LlmErrorKind::Network);
    }
}

TEST_P(ProviderFaultTest, AStreamCutAfterOutputIsAClearError) {
    for (bool graceful : {false, true}) {
        SCOPED_TRACE(graceful ? "ended cleanly" : "connection dropped");
        ASSERT_TRUE(serve(turnWithFault({{"kind", "cut_stream"},
                                         {"after_events", eventsBeforeText() + 2},
                                         {"graceful", graceful}})))
            << server->startError();
        RecordingSink sink;
        auto outcome = provider()->complete(userAsks("Hi"), sink, {});
        ASSERT_FALSE(outcome.ok());
        const LlmError& error = outcome.error();
        EXPECT_EQ(error.kind, LlmErrorKind::Network);
        EXPECT_EQ(error.attempts, 1); // "one two " already reached the sink
        EXPECT_TRUE(error.retryable);
        EXPECT_TRUE(error.afterOutput); // the caller may ask again once it drops the partial text
        EXPECT_EQ(sink.text, "one two ");
        EXPECT_TRUE(error.message.find("before the response was complete") != std::string::npos)
            << error.message;
        EXPECT_EQ(server->requests().size(), 1u);
    }
}

TEST_P(ProviderFaultTest, AWholeResponseCutShortIsRetried) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "cut_stream"}, {"after_bytes", 40}})))
        << server->startError();
    RecordingSink sink;
    auto outcome = provider()->complete(userAsks("Hi", /*stream=*/false), sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_EQ(outcome.result().attempts, 2);
    EXPECT_EQ(sink.text, kAnswer);
}

TEST_P(ProviderFaultTest, CancellingMidStreamReturnsPromptly) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "slow_tokens"}, {"delay", 1.0}})))
        << server->startError();
    auto llm = provider();
    RecordingSink sink;
    std::stop_source stop;
    auto running = std::async(
        std::launch::async, [&] { return llm->complete(userAsks("Hi"), sink, stop.get_token()); });
    ASSERT_TRUE(sink.waitForText(10s));
    const auto cancelledAt = std::chrono::steady_clock::now();
    stop.request_stop();
    ASSERT_EQ(running.wait_for(5s), std::future_status::ready);
    const auto took = std::chrono::steady_clock::now() - cancelledAt;
    auto outcome = running.get();
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::Cancelled);
    EXPECT_LT(took, 500ms); // the server waits a second between tokens
    EXPECT_LT(sink.text.size(), kAnswer.size());
    EXPECT_TRUE(waits.delays.empty()); // a cancellation is never retried
    EXPECT_EQ(server->requests().size(), 1u);
}

TEST_P(ProviderFaultTest, ATimeoutBeforeOutputIsRetried) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "slow_tokens"}, {"delay", 3}})))
        << server->startError();
    ProviderSettings settings = settingsFor(GetParam(), *server);
    settings.requestTimeout = 500ms;
    RecordingSink sink;
    const auto start = std::chrono::steady_clock::now();
    auto outcome = provider(settings)->complete(userAsks("Hi"), sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2500ms);
    EXPECT_EQ(outcome.result().attempts, 2);
    ASSERT_EQ(sink.retries.size(), 1u);
    EXPECT_EQ(sink.retries[0].reason.kind, LlmErrorKind::Timeout);
}

TEST_P(ProviderFaultTest, TheKeyNeverAppearsInErrors) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "http_401"}}))) << server->startError();
    NullStreamSink sink;
    auto outcome = provider()->complete(userAsks("Hi"), sink, {});
    ASSERT_FALSE(outcome.ok());
    const LlmError& error = outcome.error();
    EXPECT_EQ(error.kind, LlmErrorKind::Auth);
    EXPECT_EQ(error.attempts, 1);
    expectNoKey(error);
    // The server did echo it; the message keeps the rest of what it said.
    EXPECT_NE(error.message.find("Incorrect API key provided: [redacted]"), std::string::npos)
        << error.message;
    EXPECT_NE(error.message.find("the API key comes from the settings"), std::string::npos);
    expectKeyOnlyInTheAuthHeader(GetParam(), server->requests().at(0));
}

TEST_P(ProviderFaultTest, AKeyFromTheEnvironmentIsSentAndRedactedToo) {
    ASSERT_TRUE(serve(turnWithFault({{"kind", "http_401"}}))) << server->startError();
    setenv("KWB_TEST_LLM_KEY", kTestKey, 1);
    ProviderSettings settings = settingsFor(GetParam(), *server);
    settings.apiKey.clear();
    settings.apiKeyEnv = "KWB_TEST_LLM_KEY";
    auto llm = provider(settings);
    unsetenv("KWB_TEST_LLM_KEY"); // read once, when the provider was made
    NullStreamSink sink;
    auto outcome = llm->complete(userAsks("Hi"), sink, {});
    ASSERT_FALSE(outcome.ok());
    expectNoKey(outcome.error());
    EXPECT_NE(outcome.error().message.find("$KWB_TEST_LLM_KEY"), std::string::npos)
        << outcome.error().message;
    expectKeyOnlyInTheAuthHeader(GetParam(), server->requests().at(0));
}

TEST_P(ProviderFaultTest, NoServerListeningIsANetworkError) {
    const int port = unusedLoopbackPort();
    ASSERT_GT(port, 0);
    ProviderSettings settings;
    settings.kind =
        GetParam() == Api::OpenAi ? ProviderKind::OpenAiChat : ProviderKind::AnthropicMessages;
    settings.baseUrl = "http://127.0.0.1:" + std::to_string(port) + "/" + kTestKey;
    settings.model = "m";
    settings.apiKey = kTestKey;
    NullStreamSink sink;
    auto outcome = provider(settings)->complete(userAsks("Hi"), sink, {});
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::Network);
    EXPECT_EQ(outcome.error().attempts, 1); // a wrong URL does not heal by waiting
    EXPECT_TRUE(waits.delays.empty());
    EXPECT_NE(outcome.error().message.find("cannot connect"), std::string::npos)
        << outcome.error().message;
    EXPECT_NE(outcome.error().message.find("127.0.0.1:" + std::to_string(port)), std::string::npos);
    expectNoKey(outcome.error());
}

TEST_P(ProviderFaultTest, AWrongBaseUrlIsAnInvalidRequest) {
    ASSERT_TRUE(serve(json::array({{{"text", "ok"}}}))) << server->startError();
    ProviderSettings settings = settingsFor(GetParam(), *server);
    settings.baseUrl = server->url("/not-an-api");
    NullStreamSink sink;
    auto outcome = provider(settings)->complete(userAsks("Hi"), sink, {});
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::InvalidRequest);
    EXPECT_EQ(outcome.error().httpStatus, 404);
    EXPECT_NE(outcome.error().message.find("check the base URL"), std::string::npos)
        << outcome.error().message;
}

TEST_P(ProviderFaultTest, NoModelConfiguredIsAnInvalidRequest) {
    ASSERT_TRUE(serve(json::array({{{"text", "ok"}}}))) << server->startError();
    ProviderSettings settings = settingsFor(GetParam(), *server);
    settings.model.clear();
    NullStreamSink sink;
    auto outcome = provider(settings)->complete(userAsks("Hi"), sink, {});
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::InvalidRequest);
    EXPECT_TRUE(server->requests().empty());
}
