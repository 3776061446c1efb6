#pragma once

#include "agent/llm/conversation.h"
#include "agent/llm/token_usage.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::agent {

using EpisodeId = std::int64_t;

// How an episode ended, each for one kind of reason (the cause says which):
//   finished: the model stopped or hit the turn limit; the final evaluation's reward is its own;
//   failed: its task cannot be judged on this machine (the inputs do not fit, the reference
//           does not import or run; the cause is the evaluator's failure kind, "task_..."): no
//           reward, and a rollout skips the task's other samples;
//   stopped: a person (or the stuck detector) ended it;
//   cancelled: the program that ran it (a rollout's scheduler) called it off;
//   infrastructure_error: the model server, the evaluator or the process running it failed.
// Only a finished episode carries a reward a trainer may use; an infrastructure error never
// becomes a reward of -1.
enum class EpisodeStatus { Running, Finished, Failed, Stopped, Cancelled, InfrastructureError };

std::string_view episodeStatusName(EpisodeStatus status); // "running", "finished", ...
std::optional<EpisodeStatus> parseEpisodeStatus(std::string_view name);

// One agent episode as the trajectory store keeps it: what ran, with what, and how it ended.
// Everything the RL metrics need lives here, so a report never has to replay the events.
struct EpisodeRecord {
    EpisodeId id = 0; // assigned by the store
    // A fork continues another episode from one of its steps: it starts with copies of the
    // parent's events 1..forkSequence.
    std::optional<EpisodeId> parentId;
    std::optional<std::int64_t> forkSequence;

    std::string task;     // a task file path or a dataset row id
    std::string provider; // the provider's describe() text (already free of keys)
    std::string model;
    nlohmann::json settings = nlohmann::json::object(); // agent and sampling settings
    EpisodeStatus status = EpisodeStatus::Running;
    // Why it ended, as a short code ("model_stopped", "turn_limit", "provider_error",
    // "abandoned", ...); empty while running.
    std::string endCause;
    // "<host>:<pid>" of the process running it, so that a later start can close an episode whose
    // process died (TrajectoryStore::closeAbandoned).
    std::string owner;
    std::optional<double> reward;
    nlohmann::json finalEvaluation; // an EvaluationResult's toJson(); null when none

    std::string startedAt;  // ISO 8601 UTC with milliseconds; the store stamps it when empty
    std::string finishedAt; // empty while running
    double wallSeconds = 0.0;
    TokenUsage usage; // what this episode spent; a fork does not count its parent's prefix
    double costUsd = 0.0;
    int turns = 0; // assistant replies so far, the copied prefix of a fork included

    // The sequence number of the newest event, kept by the store. Pollers in other processes
    // compare it with what they have seen.
    std::int64_t lastSequence = 0;

    bool operator==(const EpisodeRecord&) const = default;
};

enum class EventKind {
    SystemPrompt,
    UserMessage,
    AssistantMessage,
    ToolCall,
    ToolResult,
    Evaluation,
    FileDiff,
    Steering, // the user redirected, paused or edited the agent mid-episode
    Status,   // the episode's status changed
    Error,
};

std::string_view eventKindName(EventKind kind); // "system_prompt", "user_message", ...
std::optional<EventKind> parseEventKind(std::string_view name);

// One step of an episode. The payload's shape depends on the kind: message kinds carry
// messageToJson(), evaluations an EvaluationResult's toJson(), diffs {"path", "diff"}.
struct EpisodeEvent {
    EpisodeId episodeId = 0;
    std::int64_t sequence = 0; // 1, 2, 3, ... per episode, assigned by the store
    std::string timestamp;     // ISO 8601 UTC with milliseconds
    EventKind kind = EventKind::Status;
    nlohmann::json payload = nlohmann::json::object();

    bool operator==(const EpisodeEvent&) const = default;
};

// An episode with its events in sequence order: the unit of export, import and replay.
struct EpisodeTrajectory {
    EpisodeRecord episode;
    std::vector<EpisodeEvent> events;

    bool operator==(const EpisodeTrajectory&) const = default;
};

nlohmann::json toJson(const EpisodeRecord& record);
nlohmann::json toJson(const EpisodeEvent& event);
// Read what toJson wrote. Unknown fields are ignored; a missing required field or a wrong type
// fails with `error` naming the field.
bool fromJson(const nlohmann::json& json, EpisodeRecord& record, std::string* error = nullptr);
bool fromJson(const nlohmann::json& json, EpisodeEvent& event, std::string* error = nullptr);

// The payload of the message event kinds, so a replay can rebuild the conversation.
nlohmann::json messageToJson(const Message& message);
bool messageFromJson(const nlohmann::json& json, Message& message, std::string* error = nullptr);
EventKind eventKindFor(Role role); // system -> SystemPrompt, tool -> ToolResult, ...

// Why a file_diff event's "path" cannot name a file a fork may write, or empty when it can: it
// must stay inside the workspace (relative, no "..") and must not be a protected file.
std::string fileDiffPathProblem(std::string_view path);

} // namespace kwb::agent
