#pragma once

#include "agent/llm/llm_provider.h"
#include "agent/llm/provider_settings.h"
#include "engine/tuning/local_policy.h"

#include <cstdint>
#include <mutex>
#include <string>

namespace kwb::agent {

// A model file run on this machine as the agent's provider: no server and no key. The model
// lives in its own `kwb-model serve` process (libtorch never shares a process with kwb), started
// on the first call and again after a stop or a crash. The conversation and the tools go over as
// OpenAI-style JSON; the process renders them with the model's chat template and the tool
// convention its training uses (model::tool_call_text), samples a reply, and reads the tool
// calls back out of it. Every reply carries its token ids and log-probabilities, what PPO on
// the episode needs.
//
// The reply arrives whole (generation is not streamed): the sink gets the text and the calls
// once. A stop ends the process at once, since generation cannot be interrupted otherwise.
class LocalModelProvider final : public LlmProvider {
public:
    // `settings.model`: a GGUF file or Hugging Face folder; `settings.localDevice`: cpu, cuda or
    // auto. `executable`: kwb-model's path; empty: locateModelWorker(), looked up here, once.
    explicit LocalModelProvider(ProviderSettings settings, std::string executable = {});
    ~LocalModelProvider() override;

    CompletionOutcome complete(const CompletionRequest& request, StreamSink& sink,
                               std::stop_token stop) override;
    std::string describe() const override;

private:
    // Starts the process when it is not running; an error when it cannot.
    std::optional<LlmError> ensureStarted(std::stop_token stop);

    std::mutex mutex_; // one completion at a time
    const ProviderSettings settings_;
    const std::string device_; // cpu or cuda, "auto" resolved once
    const std::string executable_;
    const std::string logPath_; // the process's output, quoted when it fails
    LocalPolicy policy_;
    std::uint64_t seedBase_ = 0;
    std::uint64_t calls_ = 0;
};

} // namespace kwb::agent
