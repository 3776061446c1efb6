#include "engine/model/training_conversation.h"

#include <optional>

namespace kwb::model {

std::string assistantText(const nlohmann::json& message) {
    std::string text = message.contains("content") && message["content"].is_string()
                           ? message["content"].get<std::string>()
                           : std::string();
    if (!message.contains("tool_calls") || !message["tool_calls"].is_array())
        return text;
    for (const auto& call : message["tool_calls"]) {
        const nlohmann::json function = call.value("function", nlohmann::json::object());
        nlohmann::json arguments = function.value("arguments", nlohmann::json::object());
        // OpenAI's format carries the arguments as a JSON string; the model writes an object.
        if (arguments.is_string()) {
            nlohmann::json parsed = nlohmann::json::parse(arguments.get<std::string>(), nullptr,
                                                          /*allow_exceptions=*/false);
            arguments = parsed.is_discarded() ? arguments : parsed;
        }
        // The name first, as the model is asked to write it.
        nlohmann::ordered_json shown;
        shown["name"] = function.value("name", "");
        shown["arguments"] = arguments;
        if (!text.empty())
            text += "\n";
        text += "<tool_call>\n" +
                shown.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                "\n</tool_call>";
    }
    return text;
}

namespace {

TokenizedConversation tokenizeRow(const nlohmann::json& row, const BpeTokenizer& tokenizer,
                                  const ChatTemplate& chat) {
    TokenizedConversation out;
    if (!row.is_object() || !row.contains("messages") || !row["messages"].is_array() ||
        row["messages"].empty()) {
        out.error = "the row has no \"messages\" array";
        return out;
    }
    const nlohmann::json& messages = row["messages"];
    const bool masked = row.contains("loss_mask") && row["loss_mask"].is_array();
    if (masked && row["loss_mask"].size() != messages.size()) {
        out.error = "\"loss_mask\" has " + std::to_string(row["loss_mask"].size()) +
                    " entries for " + std::to_string(messages.size()) + " messages";
        return out;
    }
    const std::optional<TokenId> endOfTurn = tokenizer.tokenId(chat.endOfTurn());
    std::vector<ChatTurn> turns;
    std::string rendered; // the text whose tokens are in `out.tokens`
    const auto append = [&](const std::string& text, bool trained) {
        if (text.compare(0, rendered.size(), rendered) != 0) {
            out.error = "the chat template is not prefix-stable for this conversation";
            return false;
        }
        const std::vector<TokenId> ids = tokenizer.encode(text.substr(rendered.size()));
        out.tokens.insert(out.tokens.end(), ids.begin(), ids.end());
        std::vector<std::uint8_t> flags(ids.size(), trained ? 1 : 0);
        // Generation stops at the end-of-turn token: what the template writes after it (a
        // newline) is the next turn's context, not the model's.
        if (trained && endOfTurn)
            for (std::size_t k = ids.size(); k-- > 0;) {
                if (ids[k] == *endOfTurn)
                    break;
                flags[k] = 0;
            }
        out.trained.insert(out.trained.end(), flags.begin(), flags.end());
        rendered = text;
        return true;
    };
    bool anyTrained = false;
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const nlohmann::json& m = messages[i];
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
            out.error = "message " + std::to_string(i) + " has no role";
            return out;
        }
        const std::string role = m["role"].get<std::string>();
        const bool assistant = role == "assistant";
        const bool trained =
            assistant && (!masked || (row["loss_mask"][i].is_number() && row["loss_mask"][i] == 1));
        if (assistant) {
            // The header is the prompt's (what generation starts from); the turn is the model's.
            if (!append(chat.render(turns, /*generationPrompt=*/true), false))
                return out;
            turns.push_back({role, assistantText(m)});
        } else {
            const std::string content = m.contains("content") && m["content"].is_string()
                                            ? m["content"].get<std::string>()
                                            : std::string();
            turns.push_back({role, content});
        }
        if (!append(chat.render(turns, false), trained))
            return out;
        anyTrained = anyTrained || trained;
    }
    if (!anyTrained)
        out.error = "no assistant turn is trained";
    return out;
}

} // namespace

TokenizedConversation tokenizeConversation(const nlohmann::json& row, const BpeTokenizer& tokenizer,
                                           const ChatTemplate& chat) {
    TokenizedConversation out = tokenizeRow(row, tokenizer, chat);
    if (!out.error.empty()) {
        // A row is used whole or not at all.
        out.tokens.clear();
        out.trained.clear();
    }
    return out;
}

} // namespace kwb::model
