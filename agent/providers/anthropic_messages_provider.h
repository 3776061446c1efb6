#pragma once

#include "agent/providers/http_llm_provider.h"

namespace kwb::agent {

// Anthropic Messages over HTTP: POST {baseUrl}/v1/messages with x-api-key and
// anthropic-version 2023-06-01.
class AnthropicMessagesProvider final : public HttpLlmProvider {
public:
    explicit AnthropicMessagesProvider(ProviderSettings settings);

protected:
    nlohmann::json requestBody(const CompletionRequest& request,
                               const std::string& model) const override;
    std::vector<std::pair<std::string, std::string>> authHeaders(const ApiKey& key) const override;
    std::unique_ptr<StreamDecoder> makeDecoder(StreamSink& sink) const override;
    CompletionOutcome parseWholeResponse(std::string_view body) const override;
};

} // namespace kwb::agent
