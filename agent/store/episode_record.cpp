#include "agent/store/episode_record.h"

#include "engine/system/bounded_json.h"
#include "engine/workspace/contained_files.h"
#include "engine/workspace/workspace.h"

#include <array>
#include <limits>
#include <optional>
#include <utility>

using nlohmann::json;

namespace kwb::agent {

namespace {

constexpr std::array kStatuses{EpisodeStatus::Running,   EpisodeStatus::Finished,
                               EpisodeStatus::Failed,    EpisodeStatus::Stopped,
                               EpisodeStatus::Cancelled, EpisodeStatus::InfrastructureError};

constexpr std::array kEventKinds{
    EventKind::SystemPrompt, EventKind::UserMessage, EventKind::AssistantMessage,
    EventKind::ToolCall,     EventKind::ToolResult,  EventKind::Evaluation,
    EventKind::FileDiff,     EventKind::Steering,    EventKind::Status,
    EventKind::Error,
};

constexpr std::array kRoles{Role::System, Role::User, Role::Assistant, Role::Tool};

// Reads fields of one JSON object without throwing; the first problem is kept in `error`.
class FieldReader {
public:
    FieldReader(const json& object, std::string* error) : object_(object), error_(error) {
        if (!object.is_object())
            fail("", "an object");
    }

    bool ok() const { return ok_; }

    void text(const char* key, std::string& out, bool required = false) {
        if (const json* value = find(key, required)) {
            if (value->is_string())
                out = value->get<std::string>();
            else
                fail(key, "a string");
        }
    }

    void integer(const char* key, std::int64_t& out, bool required = false) {
        if (const json* value = find(key, required)) {
            const std::optional<std::int64_t> number =
                value->is_number_integer() ? jsonInteger(*value) : std::nullopt;
            if (number)
                out = *number;
            else
                fail(key, "an integer of 64 bits");
        }
    }

    void integer(const char* key, int& out) {
        std::int64_t wide = out;
        integer(key, wide);
        if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max())
            fail(key, "an integer of 32 bits");
        else
            out = static_cast<int>(wide);
    }

    void optionalInteger(const char* key, std::optional<std::int64_t>& out) {
        if (const json* value = find(key, false); value && !value->is_null()) {
            std::int64_t number = 0;
            integer(key, number);
            out = number;
        }
    }

    void number(const char* key, double& out) {
        if (const json* value = find(key, false)) {
            if (value->is_number())
                out = value->get<double>();
            else
                fail(key, "a number");
        }
    }

    void optionalNumber(const char* key, std::optional<double>& out) {
        if (const json* value = find(key, false); value && !value->is_null()) {
            double number = 0.0;
            this->number(key, number);
            out = number;
        }
    }

    void any(const char* key, json& out) {
        if (const json* value = find(key, false))
            out = *value;
    }

    void object(const char* key, json& out) {
        if (const json* value = find(key, false)) {
            if (value->is_object())
                out = *value;
            else
                fail(key, "an object");
        }
    }

    void flag(const char* key, bool& out) {
        if (const json* value = find(key, false)) {
            if (value->is_boolean())
                out = value->get<bool>();
            else
                fail(key, "true or false");
        }
    }

    void fail(std::string_view key, std::string_view expected) {
        if (!ok_)
            return;
        ok_ = false;
        if (error_)
            *error_ = key.empty() ? "expected " + std::string(expected)
                                  : "\"" + std::string(key) + "\" must be " + std::string(expected);
    }

    void failWith(std::string message) {
        if (!ok_)
            return;
        ok_ = false;
        if (error_)
            *error_ = std::move(message);
    }

private:
    const json* find(const char* key, bool required) {
        if (!ok_)
            return nullptr;
        const auto it = object_.find(key);
        if (it == object_.end()) {
            if (required)
                failWith("\"" + std::string(key) + "\" is missing");
            return nullptr;
        }
        return &*it;
    }

    const json& object_;
    std::string* error_;
    bool ok_ = true;
};

json optionalToJson(const auto& value) {
    return value ? json(*value) : json(nullptr);
}

} // namespace

std::string_view episodeStatusName(EpisodeStatus status) {
    switch (status) {
    case EpisodeStatus::Running:
        return "running";
    case EpisodeStatus::Finished:
        return "finished";
    case EpisodeStatus::Failed:
        return "failed";
    case EpisodeStatus::Stopped:
        return "stopped";
    case EpisodeStatus::Cancelled:
        return "cancelled";
    case EpisodeStatus::InfrastructureError:
        return "infrastructure_error";
    }
    return "running";
}

std::optional<EpisodeStatus> parseEpisodeStatus(std::string_view name) {
    for (EpisodeStatus status : kStatuses)
        if (episodeStatusName(status) == name)
            return status;
    return std::nullopt;
}

std::string_view eventKindName(EventKind kind) {
    switch (kind) {
    case EventKind::SystemPrompt:
        return "system_prompt";
    case EventKind::UserMessage:
        return "user_message";
    case EventKind::AssistantMessage:
        return "assistant_message";
    case EventKind::ToolCall:
        return "tool_call";
    case EventKind::ToolResult:
        return "tool_result";
    case EventKind::Evaluation:
        return "evaluation";
    case EventKind::FileDiff:
        return "file_diff";
    case EventKind::Steering:
        return "steering";
    case EventKind::Status:
        return "status";
    case EventKind::Error:
        return "error";
    }
    return "error";
}

std::optional<EventKind> parseEventKind(std::string_view name) {
    for (EventKind kind : kEventKinds)
        if (eventKindName(kind) == name)
            return kind;
    return std::nullopt;
}

EventKind eventKindFor(Role role) {
    switch (role) {
    case Role::System:
        return EventKind::SystemPrompt;
    case Role::User:
        return EventKind::UserMessage;
    case Role::Assistant:
        return EventKind::AssistantMessage;
    case Role::Tool:
        return EventKind::ToolResult;
    }
    return EventKind::UserMessage;
}

json toJson(const EpisodeRecord& r) {
    return {{"id", r.id},
            {"parent_id", optionalToJson(r.parentId)},
            {"fork_sequence", optionalToJson(r.forkSequence)},
            {"task", r.task},
            {"provider", r.provider},
            {"model", r.model},
            {"settings", r.settings},
            {"status", episodeStatusName(r.status)},
            {"end_cause", r.endCause},
            {"owner", r.owner},
            {"reward", optionalToJson(r.reward)},
            {"final_evaluation", r.finalEvaluation},
            {"started_at", r.startedAt},
            {"finished_at", r.finishedAt},
            {"wall_seconds", r.wallSeconds},
            {"input_tokens", r.usage.inputTokens},
            {"output_tokens", r.usage.outputTokens},
            {"cached_input_tokens", optionalToJson(r.usage.cachedInputTokens)},
            {"cost_usd", r.costUsd},
            {"turns", r.turns},
            {"last_sequence", r.lastSequence}};
}

bool fromJson(const json& json, EpisodeRecord& record, std::string* error) {
    EpisodeRecord r;
    FieldReader read(json, error);
    read.integer("id", r.id, /*required=*/true);
    read.optionalInteger("parent_id", r.parentId);
    read.optionalInteger("fork_sequence", r.forkSequence);
    read.text("task", r.task, /*required=*/true);
    read.text("provider", r.provider);
    read.text("model", r.model);
    read.object("settings", r.settings);
    std::string status;
    read.text("status", status, /*required=*/true);
    if (read.ok()) {
        if (auto parsed = parseEpisodeStatus(status))
            r.status = *parsed;
        else
            read.failWith("unknown episode status \"" + status + "\"");
    }
    read.text("end_cause", r.endCause);
    read.text("owner", r.owner);
    read.optionalNumber("reward", r.reward);
    read.any("final_evaluation", r.finalEvaluation);
    read.text("started_at", r.startedAt, /*required=*/true);
    read.text("finished_at", r.finishedAt);
    read.number("wall_seconds", r.wallSeconds);
    read.integer("input_tokens", r.usage.inputTokens);
    read.integer("output_tokens", r.usage.outputTokens);
    read.optionalInteger("cached_input_tokens", r.usage.cachedInputTokens);
    read.number("cost_usd", r.costUsd);
    read.integer("turns", r.turns);
    read.integer("last_sequence", r.lastSequence);
    if (!read.ok())
        return false;
    record = std::move(r);
    return true;
}

json toJson(const EpisodeEvent& e) {
    return {{"episode_id", e.episodeId},
            {"sequence", e.sequence},
            {"timestamp", e.timestamp},
            {"kind", eventKindName(e.kind)},
            {"payload", e.payload}};
}

bool fromJson(const json& json, EpisodeEvent& event, std::string* error) {
    EpisodeEvent e;
    FieldReader read(json, error);
    read.integer("episode_id", e.episodeId);
    read.integer("sequence", e.sequence, /*required=*/true);
    read.text("timestamp", e.timestamp, /*required=*/true);
    std::string kind;
    read.text("kind", kind, /*required=*/true);
    if (read.ok()) {
        if (auto parsed = parseEventKind(kind))
            e.kind = *parsed;
        else
            read.failWith("unknown event kind \"" + kind + "\"");
    }
    read.any("payload", e.payload);
    if (!read.ok())
        return false;
    event = std::move(e);
    return true;
}

json messageToJson(const Message& m) {
    json out = {{"role", roleName(m.role)}, {"text", m.text}};
    if (!m.toolCalls.empty()) {
        json calls = json::array();
        for (const ToolCall& call : m.toolCalls)
            calls.push_back(
                {{"id", call.id}, {"name", call.name}, {"arguments", call.argumentsJson}});
        out["tool_calls"] = std::move(calls);
    }
    if (m.role == Role::Tool) {
        out["tool_call_id"] = m.toolCallId;
        out["tool_error"] = m.toolError;
    }
    return out;
}

bool messageFromJson(const json& json, Message& message, std::string* error) {
    Message m;
    FieldReader read(json, error);
    std::string role;
    read.text("role", role, /*required=*/true);
    if (read.ok()) {
        bool known = false;
        for (Role candidate : kRoles)
            if (roleName(candidate) == role) {
                m.role = candidate;
                known = true;
            }
        if (!known)
            read.failWith("unknown role \"" + role + "\"");
    }
    read.text("text", m.text);
    read.text("tool_call_id", m.toolCallId);
    read.flag("tool_error", m.toolError);
    if (read.ok() && json.contains("tool_calls")) {
        const auto& calls = json.at("tool_calls");
        if (!calls.is_array())
            read.fail("tool_calls", "an array");
        for (std::size_t i = 0; read.ok() && calls.is_array() && i < calls.size(); ++i) {
            ToolCall call;
            FieldReader readCall(calls[i], error);
            readCall.text("id", call.id);
            readCall.text("name", call.name, /*required=*/true);
            readCall.text("arguments", call.argumentsJson);
            if (!readCall.ok())
                return false;
            m.toolCalls.push_back(std::move(call));
        }
    }
    if (!read.ok())
        return false;
    message = std::move(m);
    return true;
}

std::string fileDiffPathProblem(std::string_view path) {
    if (std::string problem = containedPathProblem(path); !problem.empty())
        return problem + " ('" + std::string(path) + "')";
    if (isProtectedWorkspacePath(path))
        return "a protected file ('" + std::string(path) + "')";
    return {};
}

} // namespace kwb::agent
