#include "agent/providers/provider_factory.h"

#include "agent/llm/retrying_provider.h"
#include "agent/providers/anthropic_messages_provider.h"
#include "agent/providers/local_model_provider.h"
#include "agent/providers/openai_chat_provider.h"

namespace kwb::agent {

std::unique_ptr<LlmProvider> makeProvider(const ProviderSettings& settings, Sleeper sleeper) {
    std::unique_ptr<LlmProvider> provider;
    switch (settings.kind) {
    case ProviderKind::OpenAiChat:
        provider = std::make_unique<OpenAiChatProvider>(settings);
        break;
    case ProviderKind::AnthropicMessages:
        provider = std::make_unique<AnthropicMessagesProvider>(settings);
        break;
    case ProviderKind::LocalModel:
        provider = std::make_unique<LocalModelProvider>(settings);
        break;
    }
    return std::make_unique<RetryingProvider>(std::move(provider), settings.retry,
                                              std::move(sleeper));
}

} // namespace kwb::agent
