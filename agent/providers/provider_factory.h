#pragma once

#include "agent/llm/llm_provider.h"
#include "agent/llm/provider_settings.h"
#include "agent/llm/retry_policy.h"

#include <memory>

namespace kwb::agent {

// The provider the settings describe, with settings.retry applied around it. `sleeper` waits
// between attempts; tests pass one that does not wait.
std::unique_ptr<LlmProvider> makeProvider(const ProviderSettings& settings,
                                          Sleeper sleeper = sleepUnlessStopped);

} // namespace kwb::agent
