#pragma once

#include "engine/process/line_process.h"

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace kwb {

// How the policy's process is started: the model, where it runs and how it trains.
struct LocalPolicyOptions {
    std::string model; // GGUF file or Hugging Face folder
    std::string device = "cpu";
    std::string executable; // empty: locateModelWorker()
    std::string logPath;    // the process's own output
    bool fullFineTuning = false;
    int loraRank = 16;
    double loraAlpha = 32.0;
    double learningRate = 1e-4;
    int warmupSteps = 0;
    std::uint64_t seed = 1;
    int threads = 0; // the process's CPU threads (0: one per core)
};

struct PolicySample {
    std::string text; // the reply, its end token left out
    std::vector<std::int32_t> tokens;
    std::vector<float> logprobs; // each token's, as drawn
    std::string stopReason;      // stop_token, stop_sequence, max_tokens, context, constraint
    // With tools offered: the text outside the tool-call blocks, and the calls read from them
    // ({"name", "arguments": JSON text}).
    std::string content;
    nlohmann::json toolCalls = nlohmann::json::array();
    std::vector<std::string> tokenTexts; // with PolicySampling::tokenTexts: each token's text
};

struct PolicyGroup {
    std::vector<std::int32_t> promptTokens;
    std::vector<PolicySample> samples;
    double seconds = 0;
    double tokensPerSecond = 0;
    std::string error; // empty when the samples are there
    // What kind of failure: "context_too_long" (the prompt does not fit the model's context),
    // "cancelled" (the stop token fired; the process was ended), "process" (it died, hung or
    // spoke out of turn), "request" (it refused the request, and is still usable).
    std::string errorKind;
};

struct PolicySampling {
    int count = 1;
    int maxTokens = 64;
    double temperature = 1.0; // 1: the log-probabilities are the policy's own, as PPO needs
    std::string grammar;      // a ChoiceGrammar text; empty: free text
    std::uint64_t seed = 0;
    std::vector<std::string> stop; // text that ends a reply (cut before it)
    bool tokenTexts = false;
};

// The local model of a training run, in its own process (`kwb-model serve`: libtorch never
// shares a process with kwb) and spoken to in JSON lines: sample groups of replies, take GRPO
// steps, save. One caller at a time; a request that fails says why and leaves the process
// usable, and a process that dies makes every later call fail with its log's last lines.
class LocalPolicy {
public:
    // Starts the process and waits for the model to load; empty when ready, else why not.
    std::string start(const LocalPolicyOptions& options, std::stop_token stop = {});
    // The process is up and answering (false before start, after stop, a cancel or a death).
    bool running();
    PolicyGroup sample(const std::string& system, const std::string& user,
                       const PolicySampling& sampling);
    // A whole conversation: OpenAI-style messages (tool calls and results included) and the
    // tools offered (model::conversationTurns renders them). A stop request ends the process
    // (generation cannot be interrupted otherwise) and answers "cancelled" within ~0.1 s; the
    // caller starts it again for the next request.
    PolicyGroup sampleChat(const nlohmann::json& messages, const nlohmann::json& tools,
                           const PolicySampling& sampling, std::stop_token stop = {});
    // One GRPO step; the reply's figures (loss, clip_fraction, approximate_kl, entropy,
    // grad_norm, tokens_per_second, peak_memory_bytes, ...) or {"error": ...}.
    nlohmann::json grpoStep(const nlohmann::json& episodes, const nlohmann::json& settings);
    std::string save(const std::string& folder); // empty when saved
    // The training state (adapters, optimiser, step count) to a file, and back into a policy
    // started with the same options; empty when done.
    std::string checkpoint(const std::string& path);
    std::string restore(const std::string& path);
    void stop();

    const std::string& description() const { return description_; }
    std::int64_t trainableParameters() const { return trainableParameters_; }

private:
    nlohmann::json request(nlohmann::json body, std::chrono::milliseconds timeout,
                           std::stop_token stop = {});
    // The next line, waiting up to `timeout` in short slices so that `stop` is seen; nullopt
    // on timeout, end of output or stop (then *stopped is set).
    std::optional<std::string> readLineOrStop(std::chrono::milliseconds timeout,
                                              std::stop_token stop, bool* stopped);
    std::string logTail() const;

    LineProcess process_;
    LocalPolicyOptions options_;
    std::string description_;
    std::int64_t trainableParameters_ = 0;
    std::uint64_t nextId_ = 1;
};

// kwb-model next to the running executable (installed), or in the build tree
// (app/model_worker/kwb-model beside app/cli/kwb); $KWB_MODEL_WORKER overrides. Empty when none.
std::string locateModelWorker();

// A local model's device: "cpu" and "cuda" as given, anything else (auto) the GPU when the
// driver reports one.
std::string resolveModelDevice(const std::string& wanted);

} // namespace kwb
