#pragma once

#include "agent/llm/api_key.h"
#include "agent/llm/retry_policy.h"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kwb::agent {

// Which wire protocol a provider speaks.
enum class ProviderKind {
    OpenAiChat,        // OpenAI Chat Completions: OpenAI, vLLM, SGLang, llama.cpp, Ollama
    AnthropicMessages, // Anthropic Messages
    LocalModel,        // a model file run by kwb-model on this machine: no server, no key
};

std::string_view providerKindName(ProviderKind kind); // "openai", "anthropic", "local"
std::optional<ProviderKind> parseProviderKind(std::string_view name);

struct ProviderSettings {
    ProviderKind kind = ProviderKind::OpenAiChat;
    // OpenAI-compatible: up to and including "/v1" (requests go to {baseUrl}/chat/completions);
    // Anthropic: the host (requests go to {baseUrl}/v1/messages). Empty: the official endpoint.
    std::string baseUrl;
    // The API's model name; for a local model, its GGUF file or Hugging Face folder.
    std::string model;
    // A local model's device: "cpu", "cuda", or "auto" (the GPU when there is one).
    std::string localDevice = "auto";
    std::vector<std::pair<std::string, std::string>> extraHeaders;
    // The key: `apiKey` when set (from the settings), else the variable `apiKeyEnv` names, read
    // when the provider is created. Neither is required: local servers often take no key.
    std::string apiKeyEnv;
    std::string apiKey;
    int defaultMaxTokens = 4096; // when a request names none and the API requires one
    std::chrono::milliseconds requestTimeout{std::chrono::minutes(10)};
    std::chrono::milliseconds connectTimeout{std::chrono::seconds(10)};
    std::chrono::seconds idleTimeout{120}; // silence allowed mid-stream
    RetryPolicy retry;

    // The official endpoint and the usual key variable (OPENAI_API_KEY, ANTHROPIC_API_KEY).
    static ProviderSettings defaultsFor(ProviderKind kind);

    std::string effectiveBaseUrl() const; // the default when empty, no trailing '/'
    ApiKey resolveApiKey() const;
    // Where the key comes from, for messages about failed authentication; never the key.
    std::string keySourceText() const;
};

} // namespace kwb::agent
