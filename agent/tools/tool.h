#pragma once

#include "agent/llm/tool_schema.h"
#include "engine/evaluation/evaluator.h"
#include "engine/service/evaluation_service.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace kwb::agent {

// What a tool call gives back. The text goes to the model; errors are results too (the model
// reads them and tries again), so a tool never throws at the agent loop.
struct ToolResult {
    std::string text;
    bool isError = false;
    nlohmann::json data; // optional structured payload (an evaluation, a todo list); null if none
    bool truncated = false;
    // The call itself was malformed (an unknown tool, arguments that are not JSON or do not fit
    // the tool's schema), as opposed to a tool that ran and failed: the rejection fine-tuning
    // export leaves such episodes out.
    bool invalidCall = false;

    static ToolResult success(std::string text, nlohmann::json data = nullptr) {
        return {std::move(text), false, std::move(data), false, false};
    }
    static ToolResult error(std::string text) {
        return {std::move(text), true, nullptr, false, false};
    }
    static ToolResult invalid(std::string text) {
        return {std::move(text), true, nullptr, false, true};
    }
};

// One file written by a tool, so the caller can record a per-step diff. Paths are relative to
// the workspace; `before` is empty for a file the tool created.
struct FileChange {
    std::string tool;
    std::string path;
    std::optional<std::string> before;
    std::string after;
};

// TodoWrite's list: the agent's own plan, kept for the length of a run.
struct TodoItem {
    std::string content;
    std::string status; // "pending", "in_progress" or "completed"
    std::string activeForm;
};

// Everything a tool may reach. Tools never look outside `workspace`.
struct ToolContext {
    std::string workspace;
    EvaluationOptions evaluation; // for Compile / Verify / Profile
    std::string python;           // the task interpreter; empty: auto-detect
    // The process's evaluation service (warm workers and GPU lanes shared with every other
    // evaluation); null: an evaluator of the tools' own.
    EvaluationService* evaluations = nullptr;
    std::string evaluationTag; // who asks, for the service's queue ("agent:<episode>")
    std::function<void(const FileChange&)> onFileChanged;
    std::vector<TodoItem> todos;

    void reportChange(FileChange change) const {
        if (onFileChanged)
            onFileChanged(change);
    }
};

class Tool {
public:
    virtual ~Tool() = default;
    // Name, description and the JSON schema of the arguments, as the providers send them.
    virtual const ToolSchema& schema() const = 0;
    // Arguments have been checked against the schema (required keys, types) by the registry.
    // A tool reports failures as ToolResult::error; the registry also catches what escapes.
    virtual ToolResult run(const nlohmann::json& arguments, ToolContext& context,
                           std::stop_token stop) = 0;

    const std::string& name() const { return schema().name; }
};

} // namespace kwb::agent
