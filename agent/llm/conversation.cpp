#include "agent/llm/conversation.h"

#include "engine/system/bounded_json.h"
namespace kwb::agent {

std::string_view roleName(Role role) {
    switch (role) {
    case Role::System:
        return "system";
    case Role::User:
        return "user";
    case Role::Assistant:
        return "assistant";
    case Role::Tool:
        return "tool";
    }
    return "user";
}

nlohmann::json ToolCall::parsedArguments() const {
    return parseBoundedJson(argumentsJson);
}

Message Message::system(std::string text) {
    return {Role::System, std::move(text), {}, {}, false};
}

Message Message::user(std::string text) {
    return {Role::User, std::move(text), {}, {}, false};
}

Message Message::assistant(std::string text, std::vector<ToolCall> toolCalls) {
    return {Role::Assistant, std::move(text), std::move(toolCalls), {}, false};
}

Message Message::toolResult(std::string toolCallId, std::string text, bool isError) {
    return {Role::Tool, std::move(text), {}, std::move(toolCallId), isError};
}

} // namespace kwb::agent
