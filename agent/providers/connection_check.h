#pragma once

#include "agent/llm/provider_settings.h"

#include <stop_token>
#include <string>

namespace kwb::agent {

// What asking a provider for a one-word reply gave: the welcome page's and the settings'
// "Test connection". The reply, the model that answered and the time it took, or the error as
// the agent would meet it (the key refused, the server unreachable, no such model).
struct ConnectionCheck {
    bool ok = false;
    std::string endpoint; // the provider's own description; never the key
    std::string reply;    // the first words of the reply
    std::string model;    // as the server reported it
    std::string error;    // LlmError::describe() when it failed
    double seconds = 0;
};

// One short completion, no retries, short timeouts. Blocks: run it off the UI thread.
ConnectionCheck checkConnection(ProviderSettings settings, std::stop_token stop = {});

} // namespace kwb::agent
