#include "engine/model/training_conversation.h"

#include "engine/model/tool_call_text.h"

#include <optional>

namespace kwb::model {
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
    // Every turn as the model sees it (tools offered in the row close its system turn); a
    // system turn the tools needed is put first, ahead of the messages the mask numbers.
    std::string turnError;
    const std::vector<ChatTurn> all =
        conversationTurns(messages, row.value("tools", nlohmann::json()), chat, &turnError);
    if (all.empty()) {
        out.error = turnError;
        return out;
    }
    const std::size_t added = all.size() - messages.size();
    std::vector<ChatTurn> turns(all.begin(), all.begin() + std::ptrdiff_t(added));
    bool anyTrained = false;
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const ChatTurn& turn = all[i + added];
        const bool assistant = turn.role == "assistant";
        const bool trained =
            assistant && (!masked || (row["loss_mask"][i].is_number() && row["loss_mask"][i] == 1));
        // The header is the prompt's (what generation starts from); the turn is the model's.
        if (assistant && !append(chat.render(turns, /*generationPrompt=*/true), false))
            return out;
        turns.push_back(turn);
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
