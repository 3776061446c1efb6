#include "agent/providers/openai_chat_provider.h"

#include "agent/providers/openai_chat_format.h"

namespace kwb::agent {

OpenAiChatProvider::OpenAiChatProvider(ProviderSettings settings)
    : HttpLlmProvider(std::move(settings), "openai-compatible", "/chat/completions") {}

nlohmann::json OpenAiChatProvider::requestBody(const CompletionRequest& request,
                                               const std::string& model) const {
    return openAiChatRequestBody(request, model);
}

std::vector<std::pair<std::string, std::string>>
OpenAiChatProvider::authHeaders(const ApiKey& key) const {
    if (key.empty())
        return {};
    return {{"Authorization", "Bearer " + key.reveal()}};
}

std::unique_ptr<StreamDecoder> OpenAiChatProvider::makeDecoder(StreamSink& sink) const {
    return std::make_unique<OpenAiChatStreamDecoder>(sink);
}

CompletionOutcome OpenAiChatProvider::parseWholeResponse(std::string_view body) const {
    return parseOpenAiChatResponse(body);
}

} // namespace kwb::agent
