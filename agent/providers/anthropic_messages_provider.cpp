#include "agent/providers/anthropic_messages_provider.h"

#include "agent/providers/anthropic_messages_format.h"

namespace kwb::agent {

AnthropicMessagesProvider::AnthropicMessagesProvider(ProviderSettings settings)
    : HttpLlmProvider(std::move(settings), "anthropic", "/v1/messages") {}

nlohmann::json AnthropicMessagesProvider::requestBody(const CompletionRequest& request,
                                                      const std::string& model) const {
    return anthropicMessagesRequestBody(request, model, settings().defaultMaxTokens);
}

std::vector<std::pair<std::string, std::string>>
AnthropicMessagesProvider::authHeaders(const ApiKey& key) const {
    std::vector<std::pair<std::string, std::string>> headers = {
        {"anthropic-version", "2023-06-01"}};
    if (!key.empty())
        headers.emplace_back("x-api-key", key.reveal());
    return headers;
}

std::unique_ptr<StreamDecoder> AnthropicMessagesProvider::makeDecoder(StreamSink& sink) const {
    return std::make_unique<AnthropicMessagesStreamDecoder>(sink);
}

CompletionOutcome AnthropicMessagesProvider::parseWholeResponse(std::string_view body) const {
    return parseAnthropicMessagesResponse(body);
}

} // namespace kwb::agent
