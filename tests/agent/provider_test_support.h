#pragma once

#include "agent/llm/provider_settings.h"
#include "agent/providers/provider_factory.h"
#include "scripted_llm_server.h"

#include <chrono>
#include <gtest/gtest.h>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace kwb::agent::test_support {

enum class Api { OpenAi, Anthropic };

inline void PrintTo(Api api, std::ostream* out) {
    *out << (api == Api::OpenAi ? "OpenAI Chat Completions" : "Anthropic Messages");
}

inline std::string apiName(const ::testing::TestParamInfo<Api>& info) {
    return info.param == Api::OpenAi ? "OpenAi" : "Anthropic";
}

inline constexpr const char* kTestKey = "sk-test-9f8e7d6c5b4a39281706";

// Records the waits the retry layer asks for, and does not wait.
struct RecordedWaits {
    std::mutex mutex;
    std::vector<std::chrono::milliseconds> delays;

    Sleeper sleeper() {
        return [this](std::chrono::milliseconds delay, std::stop_token) {
            std::lock_guard lock(mutex);
            delays.push_back(delay);
            return true;
        };
    }
};

inline ProviderSettings settingsFor(Api api, const ScriptedLlmServer& server) {
    ProviderSettings settings;
    settings.kind = api == Api::OpenAi ? ProviderKind::OpenAiChat : ProviderKind::AnthropicMessages;
    settings.baseUrl = api == Api::OpenAi ? server.url("/v1") : server.url();
    settings.model = "test-model";
    settings.apiKey = kTestKey;
    settings.requestTimeout = std::chrono::seconds(30);
    settings.retry.maxAttempts = 3;
    settings.retry.initialDelay = std::chrono::milliseconds(10);
    return settings;
}

inline std::string endpointPath(Api api) {
    return api == Api::OpenAi ? "/v1/chat/completions" : "/v1/messages";
}

inline CompletionRequest userAsks(const std::string& question, bool stream = true) {
    CompletionRequest request;
    request.messages = {Message::system("You are a test."), Message::user(question)};
    request.stream = stream;
    return request;
}

// The key must have gone out in the API's header and nowhere else in the request.
inline void expectKeyOnlyInTheAuthHeader(Api api, const nlohmann::json& logged) {
    const auto& headers = logged["headers"];
    if (api == Api::OpenAi) {
        EXPECT_EQ(headers.value("authorization", ""), std::string("Bearer ") + kTestKey);
    } else {
        EXPECT_EQ(headers.value("x-api-key", ""), kTestKey);
        EXPECT_EQ(headers.value("anthropic-version", ""), "2023-06-01");
    }
    EXPECT_EQ(logged["body"].dump().find(kTestKey), std::string::npos);
}

} // namespace kwb::agent::test_support
