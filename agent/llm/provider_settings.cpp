#include "agent/llm/provider_settings.h"

#include <cstdlib>

namespace kwb::agent {

std::string_view providerKindName(ProviderKind kind) {
    switch (kind) {
    case ProviderKind::OpenAiChat:
        return "openai";
    case ProviderKind::AnthropicMessages:
        return "anthropic";
    case ProviderKind::LocalModel:
        return "local";
    }
    return "openai";
}

std::optional<ProviderKind> parseProviderKind(std::string_view name) {
    if (name == "openai")
        return ProviderKind::OpenAiChat;
    if (name == "anthropic")
        return ProviderKind::AnthropicMessages;
    if (name == "local")
        return ProviderKind::LocalModel;
    return std::nullopt;
}

ProviderSettings ProviderSettings::defaultsFor(ProviderKind kind) {
    ProviderSettings settings;
    settings.kind = kind;
    if (kind == ProviderKind::LocalModel)
        return settings; // no endpoint and no key
    settings.baseUrl = kind == ProviderKind::AnthropicMessages ? "https://api.anthropic.com"
                                                               : "https://api.openai.com/v1";
    settings.apiKeyEnv =
        kind == ProviderKind::AnthropicMessages ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
    return settings;
}

std::string ProviderSettings::effectiveBaseUrl() const {
    std::string url = baseUrl.empty() ? defaultsFor(kind).baseUrl : baseUrl;
    const auto query = url.find('?');
    std::string path = url.substr(0, query);
    while (!path.empty() && path.back() == '/')
        path.pop_back();
    return query == std::string::npos ? path : path + url.substr(query);
}

ApiKey ProviderSettings::resolveApiKey() const {
    ApiKey fromSettings(apiKey);
    return fromSettings.empty() ? ApiKey::fromEnvironment(apiKeyEnv) : fromSettings;
}

std::string ProviderSettings::keySourceText() const {
    if (!ApiKey(apiKey).empty())
        return "the API key comes from the settings";
    if (apiKeyEnv.empty())
        return "no API key is configured (set one in the settings or name its environment "
               "variable)";
    if (ApiKey::fromEnvironment(apiKeyEnv).empty())
        return "no API key: $" + apiKeyEnv + " is not set";
    return "the API key comes from $" + apiKeyEnv;
}

} // namespace kwb::agent
