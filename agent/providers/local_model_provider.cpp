#include "agent/providers/local_model_provider.h"

#include "agent/providers/openai_chat_format.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace kwb::agent {
namespace {

using nlohmann::json;

// One log file per provider, in the temporary folder, removed with the provider.
std::string newLogPath() {
    static std::atomic<int> next{0};
    const auto name = "kwb-local-model-" + std::to_string(getpid()) + "-" +
                      std::to_string(next.fetch_add(1)) + ".log";
    return (std::filesystem::temp_directory_path() / name).string();
}

StopReason stopReasonOf(const std::string& reason, bool hasToolCalls) {
    if (hasToolCalls)
        return StopReason::ToolUse;
    if (reason == "stop_token" || reason == "constraint")
        return StopReason::EndTurn;
    if (reason == "stop_sequence")
        return StopReason::StopSequence;
    if (reason == "max_tokens" || reason == "context")
        return StopReason::MaxTokens;
    return StopReason::Unknown;
}

} // namespace

LocalModelProvider::LocalModelProvider(ProviderSettings settings, std::string executable)
    : settings_(std::move(settings)), device_(resolveModelDevice(settings_.localDevice)),
      executable_(executable.empty() ? locateModelWorker() : std::move(executable)),
      logPath_(newLogPath()) {
    // Different episodes must draw different replies; within one provider every call differs.
    seedBase_ = (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
}

LocalModelProvider::~LocalModelProvider() {
    policy_.stop();
    std::error_code ignored;
    std::filesystem::remove(logPath_, ignored);
}

std::string LocalModelProvider::describe() const {
    return "local " + settings_.model + " (kwb-model, " + device_ + ")";
}

std::optional<LlmError> LocalModelProvider::ensureStarted(std::stop_token stop) {
    if (policy_.running())
        return std::nullopt;
    if (settings_.model.empty())
        return LlmError(LlmErrorKind::InvalidRequest,
                        "the local provider needs a model: a GGUF file or a Hugging Face folder");
    LocalPolicyOptions options;
    options.model = settings_.model;
    options.device = device_;
    options.executable = executable_;
    options.logPath = logPath_;
    const std::string error = policy_.start(options, stop);
    if (error.empty())
        return std::nullopt;
    if (stop.stop_requested())
        return LlmError(LlmErrorKind::Cancelled, "stopped while the local model was loading");
    // A model that does not load will not load on a second try either.
    return LlmError(LlmErrorKind::InvalidRequest, "the local model could not start: " + error);
}

CompletionOutcome LocalModelProvider::complete(const CompletionRequest& request, StreamSink& sink,
                                               std::stop_token stop) {
    std::lock_guard lock(mutex_);
    if (stop.stop_requested())
        return LlmError(LlmErrorKind::Cancelled, "stopped before the local model was asked");
    if (auto error = ensureStarted(stop))
        return *error;

    const json body = openAiChatRequestBody(request, settings_.model);
    PolicySampling sampling;
    sampling.maxTokens = request.maxTokens.value_or(settings_.defaultMaxTokens);
    // The policy's own distribution unless asked otherwise: what the recorded log-probabilities
    // of a PPO episode must be.
    sampling.temperature = request.temperature.value_or(1.0);
    sampling.seed = request.seed ? *request.seed : seedBase_ + calls_;
    ++calls_;
    sampling.stop = request.stop;
    sampling.tokenTexts = request.logprobs;
    const PolicyGroup group = policy_.sampleChat(
        body.value("messages", json::array()), body.value("tools", json::array()), sampling, stop);
    if (!group.error.empty()) {
        if (group.errorKind == "cancelled")
            return LlmError(LlmErrorKind::Cancelled, "stopped while the local model was writing");
        if (group.errorKind == "context_too_long")
            return LlmError(LlmErrorKind::ContextTooLong, group.error);
        if (group.errorKind == "process")
            // The next attempt starts a fresh process.
            return LlmError(LlmErrorKind::Server,
                            "the local model's process failed: " + group.error,
                            /*retryable=*/true);
        return LlmError(LlmErrorKind::InvalidRequest, "the local model refused: " + group.error);
    }
    if (group.samples.size() != 1)
        return LlmError(LlmErrorKind::MalformedResponse,
                        "the local model answered " + std::to_string(group.samples.size()) +
                            " replies to a request for one",
                        /*retryable=*/true);
    const PolicySample& sample = group.samples.front();

    CompletionResult result;
    result.text = request.tools.empty() ? sample.text : sample.content;
    for (const json& call : sample.toolCalls) {
        ToolCall toolCall;
        toolCall.id = "call_" + std::to_string(seedBase_ % 100000) + "_" + std::to_string(calls_) +
                      "_" + std::to_string(result.toolCalls.size());
        toolCall.name = call.at("name").get<std::string>();
        toolCall.argumentsJson = call.at("arguments").get<std::string>();
        result.toolCalls.push_back(std::move(toolCall));
    }
    result.rawStopReason = sample.stopReason;
    result.stopReason = stopReasonOf(sample.stopReason, !result.toolCalls.empty());
    result.usage = TokenUsage{std::int64_t(group.promptTokens.size()),
                              std::int64_t(sample.tokens.size()), std::nullopt};
    result.model = settings_.model;
    if (request.logprobs)
        for (std::size_t i = 0; i < sample.tokens.size(); ++i)
            result.tokens.push_back(
                {i < sample.tokenTexts.size() ? sample.tokenTexts[i] : std::string(),
                 sample.logprobs[i], std::int64_t(sample.tokens[i])});

    if (!result.text.empty())
        sink.onTextDelta(result.text);
    for (std::size_t i = 0; i < result.toolCalls.size(); ++i) {
        sink.onToolCallStart(int(i), result.toolCalls[i].id, result.toolCalls[i].name);
        sink.onToolCallArgumentsDelta(int(i), result.toolCalls[i].argumentsJson);
    }
    return result;
}

} // namespace kwb::agent
