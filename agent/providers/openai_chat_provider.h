#pragma once

#include "agent/providers/http_llm_provider.h"

namespace kwb::agent {

// OpenAI Chat Completions over HTTP: POST {baseUrl}/chat/completions with a Bearer key (when
// there is one). Serves OpenAI, vLLM, SGLang, llama.cpp server and Ollama alike.
class OpenAiChatProvider final : public HttpLlmProvider {
public:
    explicit OpenAiChatProvider(ProviderSettings settings);

protected:
    nlohmann::json requestBody(const CompletionRequest& request,
                               const std::string& model) const override;
    std::vector<std::pair<std::string, std::string>> authHeaders(const ApiKey& key) const override;
    std::unique_ptr<StreamDecoder> makeDecoder(StreamSink& sink) const override;
    CompletionOutcome parseWholeResponse(std::string_view body) const override;
};

} // namespace kwb::agent
