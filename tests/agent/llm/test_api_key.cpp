#include "agent/llm/api_key.h"
#include "agent/llm/provider_settings.h"
#include "agent/providers/openai_chat_provider.h"
#include "agent/providers/provider_factory.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace kwb::agent;

TEST(Redaction, ReplacesEveryOccurrence) {
    EXPECT_EQ(redactSecret("key sk-123 and sk-123.", "sk-123"), "key [redacted] and [redacted].");
    EXPECT_EQ(redactSecret("nothing here", "sk-123"), "nothing here");
    EXPECT_EQ(redactSecret("an empty secret hides nothing", ""), "an empty secret hides nothing");
    EXPECT_EQ(redactSecrets("a=LONGSECRET b=SECRET", {"SECRET", "LONGSECRET"}),
              "a=[redacted] b=[redacted]");
}

TEST(Redaction, CredentialHeaderNames) {
    EXPECT_TRUE(isCredentialHeader("Authorization"));
    EXPECT_TRUE(isCredentialHeader("x-api-key"));
    EXPECT_TRUE(isCredentialHeader("api-key"));
    EXPECT_TRUE(isCredentialHeader("X-Auth-Token"));
    EXPECT_FALSE(isCredentialHeader("anthropic-version"));
    EXPECT_FALSE(isCredentialHeader("X-Request-Id"));
}

TEST(ApiKey, TrimsAndReadsTheEnvironment) {
    EXPECT_EQ(ApiKey("  sk-abc\n").reveal(), "sk-abc");
    EXPECT_TRUE(ApiKey(" \n").empty());
    setenv("KWB_TEST_API_KEY_VAR", "sk-from-env\n", 1);
    EXPECT_EQ(ApiKey::fromEnvironment("KWB_TEST_API_KEY_VAR").reveal(), "sk-from-env");
    unsetenv("KWB_TEST_API_KEY_VAR");
    EXPECT_TRUE(ApiKey::fromEnvironment("KWB_TEST_API_KEY_VAR").empty());
    EXPECT_TRUE(ApiKey::fromEnvironment("").empty());
}

TEST(ProviderSettings, TheSettingsKeyWinsOverTheEnvironment) {
    setenv("KWB_TEST_API_KEY_VAR", "sk-env", 1);
    ProviderSettings settings;
    settings.apiKeyEnv = "KWB_TEST_API_KEY_VAR";
    EXPECT_EQ(settings.resolveApiKey().reveal(), "sk-env");
    EXPECT_EQ(settings.keySourceText(), "the API key comes from $KWB_TEST_API_KEY_VAR");
    settings.apiKey = "sk-settings";
    EXPECT_EQ(settings.resolveApiKey().reveal(), "sk-settings");
    EXPECT_EQ(settings.keySourceText().find("sk-"), std::string::npos);
    unsetenv("KWB_TEST_API_KEY_VAR");
    settings.apiKey.clear();
    EXPECT_EQ(settings.keySourceText(), "no API key: $KWB_TEST_API_KEY_VAR is not set");
}

TEST(ProviderSettings, DefaultsAndBaseUrls) {
    auto openai = ProviderSettings::defaultsFor(ProviderKind::OpenAiChat);
    EXPECT_EQ(openai.effectiveBaseUrl(), "https://api.openai.com/v1");
    EXPECT_EQ(openai.apiKeyEnv, "OPENAI_API_KEY");
    auto anthropic = ProviderSettings::defaultsFor(ProviderKind::AnthropicMessages);
    EXPECT_EQ(anthropic.effectiveBaseUrl(), "https://api.anthropic.com");
    EXPECT_EQ(anthropic.apiKeyEnv, "ANTHROPIC_API_KEY");
    ProviderSettings local;
    local.baseUrl = "http://127.0.0.1:8000/v1//";
    EXPECT_EQ(local.effectiveBaseUrl(), "http://127.0.0.1:8000/v1");
    EXPECT_EQ(parseProviderKind("anthropic"), ProviderKind::AnthropicMessages);
    EXPECT_EQ(parseProviderKind("openai"), ProviderKind::OpenAiChat);
    EXPECT_FALSE(parseProviderKind("gemini"));
    EXPECT_EQ(providerKindName(ProviderKind::AnthropicMessages), "anthropic");
}

TEST(ProviderSettings, DescriptionsNeverShowCredentials) {
    ProviderSettings settings;
    settings.baseUrl = "http://proxy.local/v1?token=sk-in-the-url";
    settings.model = "qwen";
    settings.apiKey = "sk-in-the-url";
    settings.extraHeaders = {{"api-key", "azure-secret-42"}};
    OpenAiChatProvider provider(settings);
    EXPECT_EQ(provider.describe(),
              "openai-compatible http://proxy.local/v1?token=[redacted] (qwen)");
    EXPECT_EQ(provider.endpoint(), "http://proxy.local/v1/chat/completions?token=sk-in-the-url");

    auto wrapped = makeProvider(settings);
    EXPECT_EQ(wrapped->describe(), provider.describe());
    settings.kind = ProviderKind::AnthropicMessages;
    settings.baseUrl = "http://127.0.0.1:9";
    EXPECT_EQ(makeProvider(settings)->describe(), "anthropic http://127.0.0.1:9 (qwen)");
}

// A key inside the base URL (userinfo, a credential query parameter) is masked wherever the URL
// is shown; the rest of the URL stays readable.
TEST(Redaction, UrlCredentialsAreMasked) {
    EXPECT_EQ(redactUrlCredentials("http://user:gsk_SECRET123456@127.0.0.1:8/v1"),
              "http://[redacted]@127.0.0.1:8/v1");
    EXPECT_EQ(redactUrlCredentials("https://gsk_SECRET123456@host/v1?api-version=2024&key=abc#x"),
              "https://[redacted]@host/v1?api-version=2024&key=[redacted]#x");
    EXPECT_EQ(redactUrlCredentials("https://host/v1?access_token=t0k3n&x=1"),
              "https://host/v1?access_token=[redacted]&x=1");
    EXPECT_EQ(redactUrlCredentials("http://127.0.0.1:8000/v1"), "http://127.0.0.1:8000/v1");
    EXPECT_EQ(redactUrlCredentials("http://host/v1/a@b"), "http://host/v1/a@b");

    ProviderSettings settings;
    settings.baseUrl = "http://user:gsk_GROQSECRETVALUE123456789@127.0.0.1:9/v1";
    settings.model = "m";
    EXPECT_EQ(makeProvider(settings)->describe(),
              "openai-compatible http://[redacted]@127.0.0.1:9/v1 (m)");
}
