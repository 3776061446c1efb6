#include "engine/model/tool_call_text.h"

#include <optional>

namespace kwb::model {
namespace {

using nlohmann::json;

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

std::string trimmed(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos)
        return {};
    const auto last = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(first, last - first + 1));
}

std::string compact(const nlohmann::ordered_json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A message's text: a string, nothing, or OpenAI's list of parts (the text parts joined).
std::string contentText(const json& message) {
    if (!message.contains("content"))
        return {};
    const json& content = message["content"];
    if (content.is_string())
        return content.get<std::string>();
    std::string text;
    if (content.is_array())
        for (const json& part : content)
            if (part.is_object() && part.value("type", "") == "text" && part.contains("text") &&
                part["text"].is_string())
                text += part["text"].get<std::string>();
    return text;
}

// The name of a call whose JSON is broken, if the text still says it: `"name": "..."`.
std::optional<std::string> nameInBrokenJson(std::string_view block) {
    const auto key = block.find("\"name\"");
    if (key == std::string_view::npos)
        return std::nullopt;
    auto at = block.find_first_not_of(" \t\r\n", key + 6);
    if (at == std::string_view::npos || block[at] != ':')
        return std::nullopt;
    at = block.find_first_not_of(" \t\r\n", at + 1);
    if (at == std::string_view::npos || block[at] != '"')
        return std::nullopt;
    const auto end = block.find('"', at + 1);
    if (end == std::string_view::npos || end == at + 1)
        return std::nullopt;
    return std::string(block.substr(at + 1, end - at - 1));
}

std::optional<ParsedToolCall> parseBlock(std::string_view block) {
    const std::string body = trimmed(block);
    const json value = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (value.is_object() && value.contains("name") && value["name"].is_string() &&
        !value["name"].get<std::string>().empty()) {
        ParsedToolCall call;
        call.name = value["name"].get<std::string>();
        const char* key = value.contains("arguments") ? "arguments" : "parameters";
        if (value.contains(key)) {
            const json& arguments = value[key];
            // A model that wrote its arguments as a JSON string meant that string's JSON.
            call.argumentsJson =
                arguments.is_string()
                    ? arguments.get<std::string>()
                    : arguments.dump(-1, ' ', false, json::error_handler_t::replace);
        }
        return call;
    }
    if (!value.is_discarded())
        return std::nullopt; // JSON, but no call: the model's text
    if (auto name = nameInBrokenJson(body)) {
        ParsedToolCall call;
        call.name = std::move(*name);
        call.argumentsJson = body;
        return call;
    }
    return std::nullopt;
}

} // namespace

std::string toolInstructions(const json& tools) {
    if (!tools.is_array() || tools.empty())
        return {};
    std::string listed;
    for (const json& entry : tools) {
        const json& function =
            entry.is_object() && entry.contains("function") ? entry["function"] : entry;
        if (!function.is_object())
            continue;
        nlohmann::ordered_json shown;
        shown["name"] = function.value("name", "");
        shown["description"] = function.value("description", "");
        shown["parameters"] = function.value("parameters", json::object());
        listed += compact(shown) + "\n";
    }
    if (listed.empty())
        return {};
    return "\n\n# Tools\n\nThese functions are available; each line between <tools> and </tools> "
           "gives one's name, purpose and JSON Schema parameters:\n<tools>\n" +
           listed +
           "</tools>\n\nTo call a function, write its name and arguments as one JSON object "
           "between <tool_call> and </tool_call>:\n<tool_call>\n{\"name\": \"<function>\", "
           "\"arguments\": {<its arguments>}}\n</tool_call>";
}

std::string assistantText(const json& message) {
    std::string text = contentText(message);
    if (!message.contains("tool_calls") || !message["tool_calls"].is_array())
        return text;
    for (const auto& call : message["tool_calls"]) {
        const json function = call.value("function", json::object());
        json arguments = function.value("arguments", json::object());
        // OpenAI's format carries the arguments as a JSON string; the model writes an object.
        if (arguments.is_string()) {
            json parsed = json::parse(arguments.get<std::string>(), nullptr,
                                      /*allow_exceptions=*/false);
            arguments = parsed.is_discarded() ? arguments : parsed;
        }
        // The name first, as the model is asked to write it.
        nlohmann::ordered_json shown;
        shown["name"] = function.value("name", "");
        shown["arguments"] = arguments;
        if (!text.empty())
            text += "\n";
        text += std::string(kOpen) + "\n" + compact(shown) + "\n" + std::string(kClose);
    }
    return text;
}

std::vector<ChatTurn> conversationTurns(const json& messages, const json& tools,
                                        const ChatTemplate& chat, std::string* error) {
    std::vector<ChatTurn> turns;
    if (!messages.is_array()) {
        if (error)
            *error = "the messages are not a list";
        return {};
    }
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const json& m = messages[i];
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
            if (error)
                *error = "message " + std::to_string(i) + " has no role";
            return {};
        }
        const std::string role = m["role"].get<std::string>();
        if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
            if (error)
                *error = "message " + std::to_string(i) + " has the unknown role '" + role + "'";
            return {};
        }
        turns.push_back({role, role == "assistant" ? assistantText(m) : contentText(m)});
    }
    if (const std::string instructions = toolInstructions(tools); !instructions.empty()) {
        if (!turns.empty() && turns.front().role == "system")
            turns.front().content += instructions;
        else
            turns.insert(turns.begin(),
                         ChatTurn{"system", chat.defaultSystemPrompt() + instructions});
    }
    return turns;
}

ParsedReply parseToolCalls(std::string_view text) {
    ParsedReply reply;
    std::string content;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t open = text.find(kOpen, at);
        if (open == std::string_view::npos) {
            content += text.substr(at);
            break;
        }
        content += text.substr(at, open - at);
        const std::size_t bodyStart = open + kOpen.size();
        const std::size_t close = text.find(kClose, bodyStart);
        const std::size_t bodyEnd = close == std::string_view::npos ? text.size() : close;
        const std::size_t next =
            close == std::string_view::npos ? text.size() : close + kClose.size();
        if (auto call = parseBlock(text.substr(bodyStart, bodyEnd - bodyStart)))
            reply.calls.push_back(std::move(*call));
        else
            content += text.substr(open, next - open);
        at = next;
    }
    reply.content = trimmed(content);
    return reply;
}

} // namespace kwb::model
