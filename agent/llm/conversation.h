#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::agent {

// The provider-neutral conversation. Each provider translates it to its own wire format, so the
// agent loop and the trajectory store never see an API's shape.
enum class Role { System, User, Assistant, Tool };

std::string_view roleName(Role role); // "system", "user", "assistant", "tool"

struct ToolCall {
    std::string id; // chosen by the model's API; the tool result quotes it back
    std::string name;
    // Kept as the exact text the model produced: a model can emit invalid JSON, and the agent
    // must be able to show it and answer with a tool error rather than lose it.
    std::string argumentsJson = "{}";

    // The arguments as JSON; a discarded value (is_discarded()) when the text is not JSON.
    nlohmann::json parsedArguments() const;

    bool operator==(const ToolCall&) const = default;
};

struct Message {
    Role role = Role::User;
    std::string text;
    std::vector<ToolCall> toolCalls; // assistant messages only
    std::string toolCallId;          // tool messages: the call this result answers
    bool toolError = false;          // tool messages: the tool failed (Anthropic's is_error)

    static Message system(std::string text);
    static Message user(std::string text);
    static Message assistant(std::string text, std::vector<ToolCall> toolCalls = {});
    static Message toolResult(std::string toolCallId, std::string text, bool isError = false);

    bool operator==(const Message&) const = default;
};

} // namespace kwb::agent
