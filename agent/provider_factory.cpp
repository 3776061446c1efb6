#include "agent/provider_factory.h"

#include "agent/anthropic_messages_provider.h"
#include "agent/openai_chat_provider.h"
#include "agent/retrying_provider.h"

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
    }
    return std::make_unique<RetryingProvider>(std::move(provider), settings.retry,
                                              std::move(sleeper));
}

} // namespace kwb::agent
