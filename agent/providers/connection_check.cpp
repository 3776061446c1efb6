#include "agent/providers/connection_check.h"

#include "agent/llm/conversation.h"
#include "agent/providers/provider_factory.h"

#include <chrono>

namespace kwb::agent {

ConnectionCheck checkConnection(ProviderSettings settings, std::stop_token stop) {
    using namespace std::chrono_literals;
    // A test answers now or says why; the agent's patient retries would hide the first error.
    settings.retry.maxAttempts = 1;
    settings.connectTimeout = std::min<std::chrono::milliseconds>(settings.connectTimeout, 10s);
    settings.requestTimeout = std::min<std::chrono::milliseconds>(settings.requestTimeout, 60s);
    ConnectionCheck check;
    const auto started = std::chrono::steady_clock::now();
    std::unique_ptr<LlmProvider> provider = makeProvider(settings);
    check.endpoint = provider->describe();
    CompletionRequest request;
    request.messages = {Message::user("Reply with the single word: ready")};
    request.maxTokens = 16;
    request.stream = false;
    NullStreamSink sink;
    CompletionOutcome outcome = provider->complete(request, sink, stop);
    check.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!outcome) {
        check.error = outcome.error().describe();
        return check;
    }
    check.ok = true;
    check.model = outcome.result().model;
    check.reply = outcome.result().text.substr(0, 200);
    return check;
}

} // namespace kwb::agent
