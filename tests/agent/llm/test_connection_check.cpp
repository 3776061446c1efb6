// "Test connection": one short completion from the provider the settings describe, answered or
// refused as the agent would meet it, without the agent's retries.
#include "agent/providers/connection_check.h"
#include "tests/agent/scripted_llm_server.h"

#include <gtest/gtest.h>

using namespace kwb::agent;
using kwb::agent::test_support::ScriptedLlmServer;
using nlohmann::json;

namespace {

ProviderSettings openAiAt(const ScriptedLlmServer& server) {
    ProviderSettings settings;
    settings.kind = ProviderKind::OpenAiChat;
    settings.baseUrl = server.url("/v1");
    settings.model = "scripted-model";
    settings.apiKey = "sk-test-connection";
    return settings;
}

} // namespace

TEST(ConnectionCheck, aServerThatAnswersGivesItsReplyAndTheTime) {
    ScriptedLlmServer server(json{{"turns", {{{"text", "ready"}}}}});
    ASSERT_TRUE(server.started()) << server.startError();
    const ConnectionCheck check = checkConnection(openAiAt(server));
    ASSERT_TRUE(check.ok) << check.error;
    EXPECT_EQ(check.reply, "ready");
    EXPECT_GT(check.seconds, 0.0);
    EXPECT_NE(check.endpoint.find(server.url("/v1")), std::string::npos) << check.endpoint;
    EXPECT_EQ(check.endpoint.find("sk-test-connection"), std::string::npos);
    // One small request, with the model asked for.
    ASSERT_EQ(server.requests().size(), 1u);
    const json body = server.requests()[0]["body"];
    EXPECT_EQ(body["model"], "scripted-model");
}

TEST(ConnectionCheck, aRefusedKeyIsReportedAtOnceWithoutRetries) {
    ScriptedLlmServer server(
        json{{"turns", {{{"text", "ready"}, {"faults", {{{"kind", "http_401"}}}}}}}});
    ASSERT_TRUE(server.started()) << server.startError();
    const ConnectionCheck check = checkConnection(openAiAt(server));
    EXPECT_FALSE(check.ok);
    EXPECT_NE(check.error.find("auth"), std::string::npos) << check.error;
    EXPECT_EQ(check.error.find("sk-test-connection"), std::string::npos) << check.error;
    EXPECT_EQ(server.requests().size(), 1u);
}

TEST(ConnectionCheck, aServerThatIsNotThereSaysSo) {
    ProviderSettings settings;
    settings.baseUrl =
        "http://127.0.0.1:" + std::to_string(test_support::unusedLoopbackPort()) + "/v1";
    settings.model = "m";
    const ConnectionCheck check = checkConnection(settings);
    EXPECT_FALSE(check.ok);
    EXPECT_FALSE(check.error.empty());
    EXPECT_LT(check.seconds, 15.0);
}
