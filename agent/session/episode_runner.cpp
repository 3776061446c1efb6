#include "agent/session/episode_runner.h"

#include "agent/store/model_prices.h"
#include "engine/evaluation/evaluator.h"
#include "engine/evaluation/failure_kinds.h"
#include "engine/workspace/contained_files.h"
#include "engine/workspace/workspace.h"
#include "engine/workspace/workspace_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace kwb::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using FileState = WorkspaceFiles;

constexpr std::uintmax_t kMaxTrackedBytes = kMaxRecordedFileBytes;
constexpr std::size_t kDiffShownToAgent = 4000;

std::optional<std::string> readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

json optionalText(const std::optional<std::string>& text) {
    return text ? json(*text) : json(nullptr);
}

std::size_t messageChars(const Message& message) {
    std::size_t chars = message.text.size();
    for (const auto& call : message.toolCalls)
        chars += call.name.size() + call.argumentsJson.size();
    return chars;
}

// Forwards deltas to the observer, if any.
class ForwardingSink final : public StreamSink {
public:
    explicit ForwardingSink(StreamSink* target) : target_(target) {}
    void onTextDelta(std::string_view text) override {
        keep(text_, text);
        if (target_)
            target_->onTextDelta(text);
    }
    void onToolCallStart(int index, const std::string& id, const std::string& name) override {
        Call& call = calls_[index];
        call.id = id;
        call.name = name;
        if (target_)
            target_->onToolCallStart(index, id, name);
    }
    void onToolCallArgumentsDelta(int index, std::string_view fragment) override {
        keep(calls_[index].arguments, fragment);
        if (target_)
            target_->onToolCallArgumentsDelta(index, fragment);
    }
    void onRetry(int attempt, std::chrono::milliseconds delay, const LlmError& reason) override {
        if (target_)
            target_->onRetry(attempt, delay, reason);
    }

    // Forgets the output kept so far; called before each model call.
    void clearPartial() {
        text_.clear();
        calls_.clear();
        truncated_ = false;
    }
    // What a failed call streamed before it broke, for the error event: it was shown live and
    // then dropped, so the store is the only place left that says what the server sent.
    std::optional<json> partial() const {
        if (text_.empty() && calls_.empty())
            return std::nullopt;
        json out = {{"text", text_}, {"tool_calls", json::array()}};
        for (const auto& [index, call] : calls_)
            out["tool_calls"].push_back(
                {{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}});
        if (truncated_)
            out["truncated"] = true;
        return out;
    }

private:
    struct Call {
        std::string id, name, arguments;
    };
    // A cut reply can be any size; the record keeps its start.
    static constexpr std::size_t kKeptChars = 256 * 1024;

    void keep(std::string& into, std::string_view piece) {
        const std::size_t room = into.size() < kKeptChars ? kKeptChars - into.size() : 0;
        if (piece.size() > room)
            truncated_ = true;
        into.append(piece.substr(0, std::min(room, piece.size())));
    }

    StreamSink* target_;
    std::string text_;
    std::map<int, Call> calls_;
    bool truncated_ = false;
};

} // namespace

struct EpisodeRunner::Impl {
    // A message of the conversation, with what pruning needs to name it.
    struct Entry {
        Message message;
        std::string tool;      // tool results: the tool's name
        std::int64_t step = 0; // the event's sequence number
        bool pruned = false;
    };

    TrajectoryStore& store;
    LlmProvider& provider;
    ToolRegistry& tools;
    SteeringController& steering;
    EpisodeConfig config;
    ForwardingSink sink;

    EpisodeRecord record;
    std::vector<Entry> conversation;
    FileState tracked;
    ToolContext context;
    int turns = 0;
    std::uint64_t modelRequests = 0; // made by this run of the loop: the seed's offset
    std::vector<std::string> notes;  // user messages the loop itself owes the agent

    // The context estimate: the provider's count at the last reply plus what came after.
    std::optional<std::int64_t> reportedTokens;
    std::size_t charsSinceReport = 0;

    std::string lastCall;
    int sameCallCount = 0;
    std::string lastError;
    int sameErrorCount = 0;
    int cutReplies = 0;     // replies of the current model call cut off mid-stream so far
    int overflows = 0;      // "context too long" answers to the current model call so far
    int tokenLimitCuts = 0; // replies in a row cut by the output token limit
    std::optional<std::int64_t> shrunkBudget;
    std::string storeError;

    Impl(TrajectoryStore& store, LlmProvider& provider, ToolRegistry& tools,
         SteeringController& steering, EpisodeConfig config, StreamSink* observer)
        : store(store), provider(provider), tools(tools), steering(steering),
          config(std::move(config)), sink(observer) {
        context.workspace = this->config.workspace;
        context.evaluation = this->config.evaluation;
        context.python = this->config.python;
        context.evaluations = this->config.evaluations;
        context.evaluationTag = "agent";
        context.onFileChanged = [this](const FileChange& change) {
            recordFileChange(change.tool, change.path, change.before,
                             std::optional<std::string>(change.after));
        };
    }

    std::int64_t append(EventKind kind, json payload) {
        auto event = store.appendEvent(record.id, kind, std::move(payload));
        if (!event) {
            if (storeError.empty())
                storeError = event.error().message;
            return 0;
        }
        return event.value().sequence;
    }

    void status(const std::string& message) {
        append(EventKind::Status, {{"status", "running"}, {"message", message}});
    }

    void steeringEvent(const std::string& action, json extra = json::object()) {
        extra["action"] = action;
        append(EventKind::Steering, std::move(extra));
    }

    // `details` (an assistant reply's stop reason, usage, attempts) rides along in the event.
    void addMessage(Message message, const std::string& tool = {},
                    const json& details = json::object()) {
        json payload = messageToJson(message);
        if (!tool.empty())
            payload["tool"] = tool;
        for (const auto& [key, value] : details.items())
            payload[key] = value;
        const std::int64_t step = append(eventKindFor(message.role), std::move(payload));
        charsSinceReport += messageChars(message);
        if (message.role == Role::Assistant)
            ++turns;
        conversation.push_back({std::move(message), tool, step, false});
    }

    void recordFileChange(const std::string& tool, const std::string& path,
                          const std::optional<std::string>& before,
                          const std::optional<std::string>& after, bool initial = false) {
        json payload = {{"path", path},
                        {"tool", tool},
                        {"before", optionalText(before)},
                        {"after", optionalText(after)}};
        payload["diff"] = initial ? std::string() : diffFileTexts(path, before, after).text;
        if (initial)
            payload["initial"] = true;
        append(EventKind::FileDiff, std::move(payload));
        if (after)
            tracked[path] = *after;
        else
            tracked.erase(path);
    }

    // Changes no tool reported (Bash, the user): recorded so that the events stay exact.
    void recordUnreportedChanges(const std::string& tool) {
        const FileState now = scanWorkspaceFiles(config.workspace);
        const FileState before = tracked;
        for (const auto& [path, text] : now) {
            auto old = before.find(path);
            if (old == before.end())
                recordFileChange(tool, path, std::nullopt, text);
            else if (old->second != text)
                recordFileChange(tool, path, old->second, text);
        }
        for (const auto& [path, text] : before)
            if (!now.count(path))
                recordFileChange(tool, path, text, std::nullopt);
    }

    std::int64_t estimatedTokens() const {
        const std::int64_t perToken = std::max(1, config.charsPerToken);
        std::size_t chars = 0;
        for (const auto& entry : conversation)
            chars += messageChars(entry.message);
        const std::int64_t fromText = static_cast<std::int64_t>(chars) / perToken;
        if (!reportedTokens)
            return fromText;
        // The provider's count is the better one, unless it is under half of what the text
        // implies: a server that reports 0 or a constant would otherwise never be pruned for,
        // and one that truncates silently would lose the start of the conversation.
        const std::int64_t fromReport =
            *reportedTokens + static_cast<std::int64_t>(charsSinceReport) / perToken;
        return fromReport * 2 >= fromText ? fromReport : fromText;
    }

    // The budget pruning keeps to: the configured one, until the server says the context is
    // full at a smaller size (a model with a smaller window than configured).
    std::int64_t contextBudget() const { return shrunkBudget.value_or(config.contextTokenBudget); }

    void pruneIfNeeded() { prune(config.pruning.keepRecentTurns); }

    // Messages from the `keepRecentTurns`-th last assistant reply on are kept whole (0: none
    // is). Returns how many tool outputs it pruned.
    int prune(int keepRecentTurns) {
        if (estimatedTokens() <= contextBudget())
            return 0;
        std::size_t keepFrom = conversation.size();
        if (keepRecentTurns > 0) {
            int seen = 0;
            for (std::size_t i = conversation.size(); i-- > 0;)
                if (conversation[i].message.role == Role::Assistant && ++seen >= keepRecentTurns) {
                    keepFrom = i;
                    break;
                }
            if (seen < keepRecentTurns)
                return 0;
        }
        const std::int64_t perToken = std::max(1, config.charsPerToken);
        int pruned = 0;
        std::size_t saved = 0;
        for (std::size_t i = 1; i < keepFrom && estimatedTokens() > contextBudget(); ++i) {
            Entry& entry = conversation[i];
            if (entry.message.role != Role::Tool || entry.pruned ||
                entry.message.text.size() < config.pruning.minCharsToPrune)
                continue;
            const std::size_t chars = entry.message.text.size();
            entry.message.text = "[output of " + (entry.tool.empty() ? "a tool" : entry.tool) +
                                 " at step " + std::to_string(entry.step) +
                                 " pruned: " + std::to_string(chars) + " chars]";
            entry.pruned = true;
            const std::size_t less = chars - entry.message.text.size();
            saved += less;
            if (reportedTokens)
                *reportedTokens -= static_cast<std::int64_t>(less) / perToken;
            ++pruned;
        }
        if (pruned > 0)
            status("context pruned: " + std::to_string(pruned) + " old tool outputs (" +
                   std::to_string(saved) + " chars); about " + std::to_string(estimatedTokens()) +
                   " tokens of " + std::to_string(contextBudget()));
        return pruned;
    }

    // Pause, edits made while paused, injected and owed messages: everything between steps.
    // Returns false when the episode was stopped.
    bool betweenSteps() {
        if (steering.pauseRequested() && !steering.stopRequested()) {
            steeringEvent("paused");
            if (!steering.waitWhilePaused())
                return false;
            steeringEvent("resumed");
            for (const std::string& edited : steering.takeEditedFiles())
                deliverEdit(edited);
            recordUnreportedChanges("user");
        }
        if (steering.stopRequested())
            return false;
        for (auto& injected : steering.takeMessages()) {
            const bool steer = injected.mode == SteeringController::Mode::Steer;
            steeringEvent("message", {{"mode", steer ? "steer" : "queue"}});
            addMessage(Message::user(std::move(injected.text)));
        }
        for (auto& note : std::exchange(notes, {}))
            addMessage(Message::user(std::move(note)));
        return true;
    }

    void deliverEdit(std::string path) {
        fs::path given(path);
        if (given.is_absolute())
            given = given.lexically_relative(config.workspace);
        path = given.lexically_normal().generic_string();
        if (path.empty() || path.rfind("..", 0) == 0 || fs::path(path).is_absolute()) {
            steeringEvent("file_edited", {{"path", path}, {"ignored", "outside the workspace"}});
            return;
        }
        const std::optional<std::string> now =
            readFileInside(config.workspace, path, kMaxTrackedBytes);
        auto old = tracked.find(path);
        const std::optional<std::string> before =
            old == tracked.end() ? std::nullopt : std::optional<std::string>(old->second);
        const FileTextDiff diff = diffFileTexts(path, before, now);
        if (before != now)
            recordFileChange("user", path, before, now);
        steeringEvent("file_edited", {{"path", path}});
        std::string text = "The user edited " + path + " while you were paused (+" +
                           std::to_string(diff.added) + " -" + std::to_string(diff.removed) +
                           " lines):\n" + diff.text.substr(0, kDiffShownToAgent);
        if (diff.text.size() > kDiffShownToAgent)
            text += "\n[diff cut at " + std::to_string(kDiffShownToAgent) + " chars]";
        addMessage(Message::user(std::move(text)));
    }

    // Returns the message to stop with once the agent has repeated itself too often.
    std::optional<std::string> checkStuck(const ToolCall& call, const ToolResult& result) {
        const std::string signature = call.name + "\n" + call.argumentsJson;
        sameCallCount = signature == lastCall ? sameCallCount + 1 : 1;
        lastCall = signature;
        if (result.isError) {
            sameErrorCount = result.text == lastError ? sameErrorCount + 1 : 1;
            lastError = result.text;
        } else {
            sameErrorCount = 0;
            lastError.clear();
        }
        std::string what;
        int count = 0;
        if (sameCallCount >= config.stuckWarnAfter) {
            what = "the same " + call.name + " call " + std::to_string(sameCallCount) + " times";
            count = sameCallCount;
        }
        if (sameErrorCount >= config.stuckWarnAfter && sameErrorCount > count) {
            what = "the same error " + std::to_string(sameErrorCount) +
                   " times: " + result.text.substr(0, 200);
            count = sameErrorCount;
        }
        if (count == 0)
            return std::nullopt;
        if (count >= config.stuckStopAfter) {
            status("stuck: " + what);
            return "stuck: " + what;
        }
        if (count == config.stuckWarnAfter) {
            status("stuck: " + what);
            notes.push_back("You are repeating yourself (" + what +
                            "). Stop and try a different approach.");
        }
        return std::nullopt;
    }

    void saveUsage() {
        // The list price (or the user's price file); a model without a price keeps 0, which the
        // views show as "n/a" (costText) rather than as free.
        if (const auto price = priceOf(record.model))
            record.costUsd = costOf(record.usage, *price);
        auto updated = store.updateEpisode(record);
        if (!updated && storeError.empty())
            storeError = updated.error().message;
    }

    // `judged`: an evaluation that ended the episode without a final one (a tool's that found the
    // task unjudgeable), kept as the episode's final evaluation.
    EpisodeRunResult finish(EpisodeStatus endStatus, std::string cause, std::string message,
                            bool evaluate, json judged = nullptr) {
        EpisodeOutcome outcome;
        outcome.status = endStatus;
        outcome.cause = std::move(cause);
        outcome.message = message;
        outcome.finalEvaluation = std::move(judged);
        if (evaluate && config.finalEvaluation && !steering.stopRequested()) {
            const std::stop_token stop = steering.beginStep(AgentState::Evaluating);
            const EvaluationTarget target = EvaluationTarget::forWorkspace(config.workspace);
            const EvaluationResult result =
                config.evaluations
                    ? *config.evaluations->evaluate(
                          {target, config.evaluation, "agent:" + std::to_string(record.id)}, {},
                          stop)
                    : Evaluator(config.python).evaluate(target, config.evaluation, {}, stop);
            steering.endStep();
            json evaluation = toJson(result);
            evaluation["trigger"] = "final";
            append(EventKind::Evaluation, evaluation);
            outcome.finalEvaluation = toJson(result);
            if (steering.cancelRequested()) {
                outcome.status = EpisodeStatus::Cancelled;
                outcome.cause = "cancelled";
                message = "cancelled during the final evaluation";
            } else if (steering.stopRequested() || result.failureKind == "cancelled") {
                // Stopped while the final evaluation ran: there is no reward, not a -1.
                outcome.status = EpisodeStatus::Stopped;
                outcome.cause = "stopped_in_final_evaluation";
                message = "stopped during the final evaluation";
            } else if (result.taskFailed()) {
                // The task cannot be judged here (too large, broken): nothing about the policy.
                outcome.status = EpisodeStatus::Failed;
                outcome.cause = result.failureKind;
                message = "the task could not be judged: " + result.failureMessage;
            } else if (isInfrastructureFailure(result.failureKind)) {
                outcome.status = EpisodeStatus::InfrastructureError;
                outcome.cause = "evaluator_" + result.failureKind;
                message = "the final evaluation could not run: " + result.failureMessage;
            } else {
                outcome.reward = result.reward;
            }
            outcome.message = message;
        }
        saveUsage();
        auto finished = store.finishEpisode(record.id, outcome);
        if (!finished && storeError.empty())
            storeError = finished.error().message;
        steering.finished();
        EpisodeRunResult out;
        out.id = record.id;
        out.status = outcome.status;
        out.cause = outcome.cause;
        out.reward = outcome.reward;
        out.message = storeError.empty() ? message : message + " (store: " + storeError + ")";
        out.turns = turns;
        out.usage = record.usage;
        return out;
    }

    static json replyDetails(const CompletionResult& result) {
        json details = {{"stop_reason", stopReasonName(result.stopReason)},
                        {"attempts", result.attempts}};
        if (!result.rawStopReason.empty())
            details["raw_stop_reason"] = result.rawStopReason;
        if (result.usage) {
            details["usage"] = {{"input_tokens", result.usage->inputTokens},
                                {"output_tokens", result.usage->outputTokens}};
            if (result.usage->cachedInputTokens)
                details["usage"]["cached_input_tokens"] = *result.usage->cachedInputTokens;
        }
        if (!result.model.empty())
            details["model"] = result.model;
        // The model's own tokens, as sampled: training on them needs no re-tokenizing of text.
        if (!result.tokens.empty()) {
            json text = json::array(), logprobs = json::array(), ids = json::array();
            bool allIds = true;
            for (const SampledToken& token : result.tokens) {
                text.push_back(token.token);
                logprobs.push_back(token.logprob);
                if (token.id)
                    ids.push_back(*token.id);
                else
                    allIds = false;
            }
            details["tokens"] = {{"text", text}, {"logprobs", logprobs}};
            if (allIds)
                details["tokens"]["ids"] = ids;
        }
        return details;
    }

    // The server says the conversation no longer fits: the budget shrinks below what was sent,
    // tool outputs are pruned down to it, oldest first (the last one too, if need be: its
    // placeholder tells the model the output was too long) and the call is made again. Ends
    // the episode (its work still evaluated) when nothing is left to prune.
    std::optional<EpisodeRunResult> contextOverflow(const LlmError& error) {
        const std::int64_t sent = estimatedTokens();
        shrunkBudget = std::max<std::int64_t>(1024, std::min(contextBudget(), sent * 3 / 4));
        json event = {{"source", "provider"},     {"kind", errorKindName(error.kind)},
                      {"message", error.message}, {"attempts", error.attempts},
                      {"estimated_tokens", sent}, {"budget", *shrunkBudget}};
        const bool again = overflows < config.contextOverflowRetries;
        const int pruned = again ? prune(0) : 0;
        if (pruned > 0)
            event["asked_again"] = true;
        append(EventKind::Error, std::move(event));
        if (pruned > 0) {
            ++overflows;
            return std::nullopt;
        }
        return finish(EpisodeStatus::Finished, "context_full",
                      "the conversation no longer fits the model's context (about " +
                          std::to_string(sent) + " tokens) and nothing is left to prune",
                      true);
    }

    EpisodeRunResult stopped() {
        if (steering.cancelRequested()) {
            steeringEvent("cancel");
            return finish(EpisodeStatus::Cancelled, "cancelled",
                          "cancelled: its work is given up (a rollout runs its sample again)",
                          false);
        }
        steeringEvent("stop");
        return finish(EpisodeStatus::Stopped, "user_stop", "stopped by the user", false);
    }

    // An evaluation a tool ran found that the task itself cannot be judged on this machine: the
    // episode ends at once, without a reward; its final evaluation would find the same.
    static std::optional<EvaluationResult> taskFailureIn(const json& evaluation) {
        EvaluationResult judged;
        if (!evaluation.is_object() || !fromJson(evaluation, judged) || !judged.taskFailed())
            return std::nullopt;
        return judged;
    }

    EpisodeRunResult loop() {
        while (true) {
            if (!betweenSteps())
                return stopped();
            if (turns >= config.maxTurns)
                return finish(EpisodeStatus::Finished, "turn_limit",
                              "turn limit (" + std::to_string(config.maxTurns) + ")", true);
            pruneIfNeeded();

            CompletionRequest request;
            request.model = config.model;
            request.tools = tools.schemas();
            request.maxTokens = config.maxTokens;
            request.temperature = config.temperature;
            if (config.seed)
                request.seed = *config.seed + modelRequests;
            ++modelRequests;
            request.stream = config.stream;
            request.logprobs = config.logprobs;
            request.tokenIds = config.tokenIds;
            for (const auto& entry : conversation)
                request.messages.push_back(entry.message);

            const std::stop_token stop = steering.beginStep(AgentState::Thinking);
            sink.clearPartial();
            CompletionOutcome outcome = provider.complete(request, sink, stop);
            steering.endStep();

            if (!outcome.ok()) {
                const LlmError& error = outcome.error();
                if (error.kind == LlmErrorKind::Cancelled) {
                    if (steering.stopRequested())
                        return stopped();
                    if (steering.pauseRequested() || steering.hasPendingSteer()) {
                        steeringEvent("interrupted", {{"during", "model call"}});
                        continue; // the partial reply is dropped; the call is made again
                    }
                }
                if (error.kind == LlmErrorKind::ContextTooLong) {
                    if (auto ended = contextOverflow(error))
                        return *ended;
                    continue; // pruned: the call is made again
                }
                // Any failure after output began (a cut, a malformed or invalid event, bad UTF-8,
                // an aborted generation) is asked again, whether or not the same request could
                // have been retried before output: the provider could not retry it because
                // output had been shown, and it says nothing about the model. A bounded number
                // of times, then it is the infrastructure error below.
                const bool askAgain = error.afterOutput && cutReplies < config.cutReplyRetries;
                json event = {{"source", "provider"},
                              {"kind", errorKindName(error.kind)},
                              {"message", error.message},
                              {"attempts", error.attempts}};
                if (askAgain)
                    event["asked_again"] = true;
                if (auto partial = sink.partial())
                    event["discarded_output"] = std::move(*partial);
                append(EventKind::Error, std::move(event));
                if (askAgain) {
                    ++cutReplies;
                    sink.onRetry(error.attempts + 1, std::chrono::milliseconds(0), error);
                    continue; // the partial reply is dropped; the call is made again
                }
                // The model server failed, not the model: no reward a trainer could take for
                // the policy's.
                return finish(EpisodeStatus::InfrastructureError,
                              "provider_" + std::string(errorKindName(error.kind)),
                              "provider error: " + error.describe(), false);
            }
            cutReplies = 0;
            overflows = 0;

            CompletionResult& result = outcome.result();
            if (result.usage) {
                const TokenUsage plausible = result.usage->plausibleForOneReply(
                    config.maxTokens ? std::optional<std::int64_t>(*config.maxTokens)
                                     : std::nullopt);
                if (!(plausible == *result.usage)) {
                    json event = {{"kind", "implausible_usage"},
                                  {"reported",
                                   {{"input_tokens", result.usage->inputTokens},
                                    {"output_tokens", result.usage->outputTokens}}},
                                  {"kept",
                                   {{"input_tokens", plausible.inputTokens},
                                    {"output_tokens", plausible.outputTokens}}}};
                    append(EventKind::Error, std::move(event));
                    result.usage = plausible;
                }
                record.usage += *result.usage;
                reportedTokens = result.usage->inputTokens + result.usage->outputTokens;
                charsSinceReport = 0;
            }
            std::vector<ToolCall> calls = result.toolCalls;
            const StopReason stopReason = result.stopReason;
            addMessage(Message::assistant(std::move(result.text), calls), {}, replyDetails(result));
            if (reportedTokens)
                charsSinceReport = 0; // the reply is inside the reported output tokens
            saveUsage();
            tokenLimitCuts = stopReason == StopReason::MaxTokens ? tokenLimitCuts + 1 : 0;
            if (calls.empty() && stopReason == StopReason::MaxTokens) {
                // Cut by the output limit, not finished: the model gets to go on.
                if (tokenLimitCuts > config.tokenLimitContinuations)
                    return finish(EpisodeStatus::Finished, "token_limit",
                                  "the model's replies kept ending at the output token limit (" +
                                      std::to_string(tokenLimitCuts) + " in a row)",
                                  true);
                notes.push_back("Your last reply was cut off at the output token limit. Go on "
                                "from where it stopped; keep replies short and act through the "
                                "tools.");
                continue;
            }
            if (calls.empty())
                return finish(EpisodeStatus::Finished, "model_stopped", "the model stopped", true);

            std::optional<std::string> stuck;
            std::optional<EvaluationResult> taskFailure;
            bool interrupted = false;
            for (const ToolCall& call : calls) {
                if (interrupted || steering.stopRequested()) {
                    addMessage(
                        Message::toolResult(call.id, "not run: interrupted by the user", true),
                        call.name);
                    continue;
                }
                append(EventKind::ToolCall,
                       {{"id", call.id}, {"name", call.name}, {"arguments", call.argumentsJson}});
                const std::stop_token toolStop = steering.beginStep(AgentState::Tool);
                ToolResult outcomeOfTool = tools.run(call, context, toolStop);
                steering.endStep();
                interrupted = toolStop.stop_requested();
                addMessage(Message::toolResult(call.id, outcomeOfTool.text, outcomeOfTool.isError),
                           call.name,
                           outcomeOfTool.invalidCall ? json{{"invalid_call", true}}
                                                     : json::object());
                const json& data = outcomeOfTool.data;
                if (data.is_object() && data.contains("evaluation") &&
                    (data.value("mode", "") == "verify" || data.value("mode", "") == "profile")) {
                    json evaluation = data["evaluation"];
                    if (!taskFailure)
                        taskFailure = taskFailureIn(evaluation);
                    evaluation["trigger"] = call.name;
                    append(EventKind::Evaluation, std::move(evaluation));
                }
                if (!stuck)
                    stuck = checkStuck(call, outcomeOfTool);
            }
            recordUnreportedChanges("workspace");
            if (steering.stopRequested())
                return stopped();
            if (taskFailure)
                return finish(EpisodeStatus::Failed, taskFailure->failureKind,
                              "the task could not be judged: " + taskFailure->failureMessage, false,
                              toJson(*taskFailure));
            if (stuck)
                return finish(EpisodeStatus::Stopped, "stuck", *stuck, true);
        }
    }

    bool createEpisode(std::optional<EpisodeId> parent, std::int64_t step) {
        if (parent) {
            auto forked = store.forkEpisode(*parent, step);
            if (!forked) {
                storeError = forked.error().message;
                return false;
            }
            record = forked.value();
        } else {
            EpisodeRecord fresh;
            fresh.task = config.taskPath.empty() ? config.workspace : config.taskPath;
            auto created = store.createEpisode(std::move(fresh));
            if (!created) {
                storeError = created.error().message;
                return false;
            }
            record = created.value();
        }
        record.provider =
            config.providerDescription.empty() ? provider.describe() : config.providerDescription;
        record.model = config.model;
        json settings = config.extraSettings.is_object() ? config.extraSettings : json::object();
        settings["workspace"] = config.workspace;
        settings["max_turns"] = config.maxTurns;
        settings["context_token_budget"] = config.contextTokenBudget;
        settings["prune_keep_recent_turns"] = config.pruning.keepRecentTurns;
        settings["stream"] = config.stream;
        settings["logprobs"] = config.logprobs;
        settings["token_ids"] = config.tokenIds;
        if (config.temperature)
            settings["temperature"] = *config.temperature;
        if (config.seed)
            settings["seed"] = *config.seed;
        if (config.maxTokens)
            settings["max_tokens"] = *config.maxTokens;
        record.settings = std::move(settings);
        saveUsage();
        return true;
    }

    EpisodeRunResult failedToStart() {
        EpisodeRunResult out;
        out.id = record.id;
        out.message = "cannot start the episode: " + storeError;
        return out;
    }

    EpisodeRunResult run() {
        if (!createEpisode(std::nullopt, 0))
            return failedToStart();
        const std::string taskFile = config.taskPath.empty()
                                         ? (fs::path(config.workspace) / "model.py").string()
                                         : config.taskPath;
        const std::string skill = readFileInside(config.workspace, "SKILL.md").value_or("");
        const std::string task = readFile(taskFile).value_or("");
        addMessage(Message::system(skill +
                                   "\n\n# Task\n\nThe reference model (model.py):\n\n"
                                   "```python\n" +
                                   task + "```\n"));
        addMessage(Message::user(
            "Write ModelNew in model_new.py (with CUDA kernels under kernels/) so that it matches "
            "Model and runs faster. Check your work with Compile, Verify and Profile. Answer "
            "without a tool call when you are done."));
        for (const auto& [path, text] : scanWorkspaceFiles(config.workspace))
            recordFileChange("initial", path, std::nullopt, text, /*initial=*/true);
        return loop();
    }

    EpisodeRunResult forkFrom(EpisodeId parent, std::int64_t step) {
        auto events = store.loadEvents(parent);
        if (!events) {
            storeError = events.error().message;
            return failedToStart();
        }
        auto parentRecord = store.loadEpisode(parent);
        if (!parentRecord) {
            storeError = parentRecord.error().message;
            return failedToStart();
        }
        if (config.taskPath.empty())
            config.taskPath = parentRecord.value().task;

        // The files and the conversation as they were after event `step`.
        std::map<std::string, std::optional<std::string>> files;
        std::vector<Entry> restored;
        for (const EpisodeEvent& event : events.value()) {
            if (event.sequence > step)
                break;
            if (event.kind == EventKind::FileDiff) {
                const json& after = event.payload["after"];
                const std::string path = event.payload.value("path", "");
                // An imported episode is outside input: its paths must stay in the workspace.
                if (std::string problem = fileDiffPathProblem(path); !problem.empty()) {
                    storeError = "step " + std::to_string(event.sequence) +
                                 " of the parent names an unusable file: " + problem;
                    return failedToStart();
                }
                files[path] = after.is_string()
                                  ? std::optional<std::string>(after.get<std::string>())
                                  : std::nullopt;
                continue;
            }
            if (event.kind != EventKind::SystemPrompt && event.kind != EventKind::UserMessage &&
                event.kind != EventKind::AssistantMessage && event.kind != EventKind::ToolResult)
                continue;
            Message message;
            if (messageFromJson(event.payload, message))
                restored.push_back(
                    {std::move(message), event.payload.value("tool", ""), event.sequence, false});
        }

        WorkspaceInitOptions init;
        init.overwrite = true;
        const WorkspaceInitResult made = initWorkspace(config.taskPath, config.workspace, init);
        if (!made.ok) {
            storeError = "cannot create the fork's workspace: " + made.error;
            return failedToStart();
        }
        for (const auto& [path, text] : scanWorkspaceFiles(config.workspace))
            if (!files.count(path) || !files[path])
                removeFileInside(config.workspace, path);
        for (const auto& [path, text] : files) {
            std::string error;
            if (text && !writeFileInside(config.workspace, path, *text, &error)) {
                storeError = "cannot restore " + path + ": " + error;
                return failedToStart();
            }
        }

        if (!createEpisode(parent, step))
            return failedToStart();
        tracked = scanWorkspaceFiles(config.workspace);
        conversation = std::move(restored);
        turns = 0;
        for (const auto& entry : conversation)
            if (entry.message.role == Role::Assistant)
                ++turns;
        // Calls of the last reply that the parent had not answered by the fork step get an
        // answer, so that the conversation stays valid for the APIs.
        std::vector<std::pair<std::string, std::string>> unanswered;
        for (const auto& entry : conversation) {
            if (entry.message.role == Role::Assistant) {
                unanswered.clear();
                for (const ToolCall& call : entry.message.toolCalls)
                    unanswered.emplace_back(call.id, call.name);
            } else if (entry.message.role == Role::Tool) {
                std::erase_if(unanswered, [&](const auto& call) {
                    return call.first == entry.message.toolCallId;
                });
            }
        }
        for (const auto& [id, name] : unanswered)
            addMessage(
                Message::toolResult(id, "not run: the episode was forked before this call", true),
                name);
        steeringEvent("forked", {{"parent", parent}, {"step", step}});
        recordUnreportedChanges("workspace");
        return loop();
    }
};

EpisodeRunner::EpisodeRunner(TrajectoryStore& store, LlmProvider& provider, ToolRegistry& tools,
                             SteeringController& steering, EpisodeConfig config,
                             StreamSink* observer)
    : impl_(std::make_unique<Impl>(store, provider, tools, steering, std::move(config), observer)) {
}

EpisodeRunner::~EpisodeRunner() = default;

EpisodeRunResult EpisodeRunner::run() {
    return impl_->run();
}

EpisodeRunResult EpisodeRunner::forkFrom(EpisodeId parent, std::int64_t step) {
    return impl_->forkFrom(parent, step);
}

} // namespace kwb::agent
