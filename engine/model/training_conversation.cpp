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
    std::string rendered;        // the text whose tokens are in `out.tokens`
    std::vector<float> logprobs; // one per token of `out.tokens`
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
        logprobs.resize(out.tokens.size(), 0.0f);
        rendered = text;
        return true;
    };
    // An assistant turn as the ids the model drew (with their log-probabilities), then what the
    // template writes after the turn's end-of-turn marker as context; `text` is the conversation
    // rendered through this turn, from which the later turns continue.
    const auto appendSampled = [&](const nlohmann::json& entry, const std::string& text,
                                   bool trained, std::size_t index) {
        const nlohmann::json ids = entry["ids"];
        const nlohmann::json drawn = entry.value("logprobs", nlohmann::json());
        if (!drawn.is_array() || drawn.size() != ids.size()) {
            out.error = "message " + std::to_string(index) +
                        ": the sampled tokens and their log-probabilities differ in count";
            return false;
        }
        const std::size_t vocabulary = tokenizer.vocabularySize();
        for (std::size_t k = 0; k < ids.size(); ++k) {
            if (!ids[k].is_number_integer() || ids[k].get<std::int64_t>() < 0 ||
                std::size_t(ids[k].get<std::int64_t>()) >= vocabulary || !drawn[k].is_number()) {
                out.error = "message " + std::to_string(index) + ": sampled token " +
                            std::to_string(k) + " is not a token of this model";
                return false;
            }
            out.tokens.push_back(ids[k].get<TokenId>());
            out.trained.push_back(trained ? 1 : 0);
            logprobs.push_back(trained ? drawn[k].get<float>() : 0.0f);
        }
        const std::string marker = chat.endOfTurn();
        const std::size_t end = text.rfind(marker);
        if (end == std::string::npos || end < rendered.size()) {
            out.error = "the chat template wrote no end-of-turn marker for message " +
                        std::to_string(index);
            return false;
        }
        // A reply cut short did not write the marker: the template's follows as context.
        if (!endOfTurn || out.tokens.back() != *endOfTurn) {
            const std::vector<TokenId> closing = tokenizer.encode(marker);
            out.tokens.insert(out.tokens.end(), closing.begin(), closing.end());
            out.trained.insert(out.trained.end(), closing.size(), 0);
            logprobs.resize(out.tokens.size(), 0.0f);
        }
        const std::vector<TokenId> tail = tokenizer.encode(text.substr(end + marker.size()));
        out.tokens.insert(out.tokens.end(), tail.begin(), tail.end());
        out.trained.insert(out.trained.end(), tail.size(), 0);
        logprobs.resize(out.tokens.size(), 0.0f);
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
    const nlohmann::json sampled = row.value("sampled_tokens", nlohmann::json());
    if (!sampled.is_null() && (!sampled.is_array() || sampled.size() != messages.size())) {
        out.error = "\"sampled_tokens\" does not have one entry per message";
        return out;
    }
    bool anyTrained = false, everyTrainedSampled = true;
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const ChatTurn& turn = all[i + added];
        const bool assistant = turn.role == "assistant";
        const bool trained =
            assistant && (!masked || (row["loss_mask"][i].is_number() && row["loss_mask"][i] == 1));
        // The header is the prompt's (what generation starts from); the turn is the model's.
        if (assistant && !append(chat.render(turns, /*generationPrompt=*/true), false))
            return out;
        turns.push_back(turn);
        const nlohmann::json ids = sampled.is_array() && sampled[i].is_object()
                                       ? sampled[i].value("ids", nlohmann::json())
                                       : nlohmann::json();
        if (assistant && ids.is_array() && !ids.empty()) {
            if (!appendSampled(sampled[i], chat.render(turns, false), trained, i))
                return out;
        } else {
            everyTrainedSampled = everyTrainedSampled && !trained;
            if (!append(chat.render(turns, false), trained))
                return out;
        }
        anyTrained = anyTrained || trained;
    }
    if (everyTrainedSampled)
        out.sampledLogprobs = std::move(logprobs);
    else
        out.sampledLogprobs.clear();
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
        out.sampledLogprobs.clear();
    }
    return out;
}

} // namespace kwb::model
