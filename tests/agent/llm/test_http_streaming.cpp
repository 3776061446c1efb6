// HttpClient::stream against the scripted server: chunks as they arrive, headers, error bodies,
// and a stop that ends a transfer while the server is silent.
#include "agent/providers/http_client.h"
#include "tests/agent/scripted_llm_server.h"

#include <future>
#include <gtest/gtest.h>

using namespace kwb::agent;
using namespace kwb::agent::test_support;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

HttpRequest chatRequest(const ScriptedLlmServer& server, bool stream) {
    HttpRequest request;
    request.method = "POST";
    request.url = server.url("/v1/chat/completions");
    request.headers = {{"Content-Type", "application/json"}};
    request.body = json{{"model", "m"},
                        {"stream", stream},
                        {"messages", {{{"role", "user"}, {"content", "hi"}}}}}
                       .dump();
    request.timeout = 20s;
    return request;
}

} // namespace

TEST(HttpStreaming, ChunksArriveAsTheServerSendsThem) {
    ScriptedLlmServer server(json{
        {"turns", {{{"text", "a b c"}, {"fault", {{"kind", "slow_tokens"}, {"delay", 0.1}}}}}}});
    ASSERT_TRUE(server.started()) << server.startError();
    HttpClient client;
    std::vector<std::string> chunks;
    HttpResponse response = client.stream(chatRequest(server, true), [&](std::string_view chunk) {
        chunks.emplace_back(chunk);
        return true;
    });
    ASSERT_TRUE(response.ok()) << response.error;
    EXPECT_GE(chunks.size(), 4u); // one per event at least, since tokens are 100 ms apart
    EXPECT_TRUE(response.body.empty());
    EXPECT_EQ(response.header("Content-Type"), "text/event-stream");
    EXPECT_EQ(response.header("content-type"), "text/event-stream");
    EXPECT_FALSE(response.header("x-missing"));
    std::string all;
    for (const auto& c : chunks)
        all += c;
    EXPECT_NE(all.find("data: [DONE]"), std::string::npos);
}

TEST(HttpStreaming, ErrorBodiesAndRetryAfterAreKept) {
    ScriptedLlmServer server(
        json{{"turns", {{{"text", "x"}, {"fault", {{"kind", "http_429"}, {"retry_after", 3}}}}}}});
    ASSERT_TRUE(server.started()) << server.startError();
    HttpClient client;
    int chunks = 0;
    HttpResponse response = client.stream(chatRequest(server, true), [&](std::string_view) {
        ++chunks;
        return true;
    });
    EXPECT_EQ(response.status, 429);
    EXPECT_EQ(response.failure, HttpFailure::None);
    EXPECT_EQ(chunks, 0); // an error page is not a stream
    EXPECT_NE(response.body.find("rate limit exceeded"), std::string::npos) << response.body;
    EXPECT_EQ(response.header("Retry-After"), "3");
}

TEST(HttpStreaming, AStopEndsASilentTransferAtOnce) {
    ScriptedLlmServer server(
        json{{"turns", {{{"text", "a b c"}, {"fault", {{"kind", "slow_tokens"}, {"delay", 5}}}}}}});
    ASSERT_TRUE(server.started()) << server.startError();
    HttpClient client;
    std::stop_source stop;
    std::promise<void> firstChunk;
    bool signalled = false;
    auto running = std::async(std::launch::async, [&] {
        return client.stream(
            chatRequest(server, true),
            [&](std::string_view) {
                if (!signalled) {
                    signalled = true;
                    firstChunk.set_value();
                }
                return true;
            },
            stop.get_token());
    });
    ASSERT_EQ(firstChunk.get_future().wait_for(10s), std::future_status::ready);
    const auto stoppedAt = std::chrono::steady_clock::now();
    stop.request_stop(); // the server now sleeps 5 s before its next byte
    ASSERT_EQ(running.wait_for(3s), std::future_status::ready);
    EXPECT_LT(std::chrono::steady_clock::now() - stoppedAt, 500ms);
    HttpResponse response = running.get();
    EXPECT_EQ(response.failure, HttpFailure::Cancelled);
    EXPECT_FALSE(response.ok());
}

TEST(HttpStreaming, TheReceiverCanEndATransfer) {
    ScriptedLlmServer server(json{{"turns", {{{"text", "a b c d e f"}}}}});
    ASSERT_TRUE(server.started()) << server.startError();
    HttpClient client;
    HttpResponse response =
        client.stream(chatRequest(server, true), [](std::string_view) { return false; });
    EXPECT_EQ(response.failure, HttpFailure::StoppedByReceiver);
    // The client stays usable after an aborted transfer.
    HttpResponse next = client.send(chatRequest(server, false));
    EXPECT_EQ(next.status, 400) << next.body; // the one-turn script is used up
    EXPECT_NE(next.body.find("no turn left"), std::string::npos);
}

TEST(HttpStreaming, ABrokenConnectionIsInterrupted) {
    ScriptedLlmServer server(
        json{{"turns",
              {{{"text", "a b c"}, {"fault", {{"kind", "cut_stream"}, {"after_events", 2}}}}}}});
    ASSERT_TRUE(server.started()) << server.startError();
    HttpClient client;
    HttpResponse response =
        client.stream(chatRequest(server, true), [](std::string_view) { return true; });
    EXPECT_EQ(response.status, 200);
    EXPECT_EQ(response.failure, HttpFailure::Interrupted) << response.error;
    EXPECT_FALSE(response.error.empty());
}
