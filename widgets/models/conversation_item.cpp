#include "widgets/models/conversation_item.h"

#include "engine/evaluation/evaluation_result.h"
#include "engine/system/bounded_json.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace kwb::ui {
namespace {

using nlohmann::json;

constexpr std::size_t kShortText = 400;
constexpr std::size_t kSummaryChars = 80;

std::string text(const json& payload, const char* key) {
    const auto it = payload.find(key);
    return it != payload.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string firstLine(const std::string& value) {
    std::string line = value.substr(0, value.find('\n'));
    if (line.size() > kSummaryChars)
        line = line.substr(0, kSummaryChars - 3) + "...";
    return line;
}

bool isLong(const std::string& value) {
    return value.size() > kShortText || std::count(value.begin(), value.end(), '\n') > 5;
}

// The argument a reader recognises a call by: the file, the pattern or the command.
std::string callSummary(const json& arguments) {
    if (!arguments.is_object())
        return {};
    for (const char* key : {"file_path", "path", "pattern", "command", "bash_id"})
        if (auto value = text(arguments, key); !value.empty())
            return firstLine(value);
    return {};
}

ConversationItem evaluationItem(const json& payload) {
    ConversationItem item;
    item.kind = ConversationItemKind::Evaluation;
    kwb::EvaluationResult result;
    std::string error;
    EvaluationCard card;
    card.trigger = text(payload, "trigger");
    if (kwb::fromJson(payload, result, &error)) {
        card.verdict = result.verdict();
        card.reward = result.reward;
        card.speedupVsEager = result.speedupVsEager;
        card.speedupVsCompile = result.speedupVsCompile;
        card.correct = result.correct;
        for (const auto& flag : result.flags)
            card.flags.push_back(flag.code + " (" + kwb::toString(flag.severity) +
                                 "): " + flag.reason);
        item.body = result.rewardReason;
    } else {
        card.verdict = "unreadable evaluation: " + error;
    }
    item.title = "Evaluation" + (card.trigger.empty() ? std::string() : " (" + card.trigger + ")") +
                 ": reward " + std::to_string(card.reward);
    item.problem = card.reward < 0;
    item.evaluation = std::move(card);
    return item;
}

} // namespace

ConversationItem conversationItemFor(const agent::EpisodeEvent& event) {
    using agent::EventKind;
    const json& p = event.payload;
    ConversationItem item;
    switch (event.kind) {
    case EventKind::SystemPrompt:
        item.kind = ConversationItemKind::System;
        item.title = "System prompt";
        item.body = text(p, "text");
        item.foldable = true;
        break;
    case EventKind::UserMessage:
        item.kind = ConversationItemKind::User;
        item.body = text(p, "text");
        item.title = "User: " + firstLine(item.body);
        item.foldable = isLong(item.body);
        break;
    case EventKind::AssistantMessage: {
        item.kind = ConversationItemKind::ModelText;
        item.body = text(p, "text");
        const std::size_t calls = p.contains("tool_calls") ? p["tool_calls"].size() : 0;
        item.title = "Model";
        if (calls > 0)
            item.title +=
                " (" + std::to_string(calls) + (calls == 1 ? " tool call)" : " tool calls)");
        break;
    }
    case EventKind::ToolCall: {
        item.kind = ConversationItemKind::ToolCall;
        const std::string arguments = text(p, "arguments");
        const json parsed = parseBoundedJson(arguments);
        const std::string summary = parsed.is_discarded() ? std::string() : callSummary(parsed);
        item.title = "Tool call: " + text(p, "name") + (summary.empty() ? "" : "  " + summary);
        item.body = parsed.is_discarded() ? arguments : parsed.dump(2);
        item.foldable = true;
        break;
    }
    case EventKind::ToolResult: {
        item.kind = ConversationItemKind::ToolResult;
        item.body = text(p, "text");
        item.problem = p.value("tool_error", false);
        const std::string tool = text(p, "tool");
        item.title = (tool.empty() ? std::string("Tool") : tool) +
                     (item.problem ? " failed: " : " result: ") + firstLine(item.body);
        item.foldable = true;
        break;
    }
    case EventKind::Evaluation:
        item = evaluationItem(p);
        break;
    case EventKind::FileDiff: {
        item.kind = ConversationItemKind::FileDiff;
        const std::string path = text(p, "path");
        const bool initial = p.value("initial", false);
        const std::string tool = text(p, "tool");
        item.title = initial ? "File " + path + " (initial contents)"
                             : "File " + path + " changed" + (tool.empty() ? "" : " by " + tool);
        item.body = initial ? text(p, "after") : text(p, "diff");
        item.foldable = true;
        break;
    }
    case EventKind::Steering: {
        item.kind = ConversationItemKind::Steering;
        const std::string action = text(p, "action");
        std::string detail;
        if (auto mode = text(p, "mode"); !mode.empty())
            detail = " (" + mode + ")";
        else if (auto path = text(p, "path"); !path.empty())
            detail = " " + path;
        else if (p.contains("parent"))
            detail =
                " from episode " + p["parent"].dump() + " step " + p.value("step", json()).dump();
        item.title = "Steering: " + action + detail;
        item.body = text(p, "text");
        break;
    }
    case EventKind::Status: {
        item.kind = ConversationItemKind::Status;
        const std::string message = text(p, "message");
        item.title = "Status: " + text(p, "status") + (message.empty() ? "" : " - " + message);
        item.problem = message.rfind("stuck", 0) == 0 || text(p, "status") == "failed";
        break;
    }
    case EventKind::Error: {
        item.kind = ConversationItemKind::Error;
        const std::string source = text(p, "source");
        const std::string kind = text(p, "kind");
        item.title =
            "Error" + (source.empty() ? std::string()
                                      : " (" + source + (kind.empty() ? "" : ", " + kind) + ")");
        item.body = text(p, "message");
        item.title += ": " + firstLine(item.body);
        item.problem = true;
        break;
    }
    }
    item.sequence = event.sequence;
    return item;
}

} // namespace kwb::ui
