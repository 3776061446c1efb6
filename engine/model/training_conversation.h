#pragma once

#include "engine/model/bpe_tokenizer.h"
#include "engine/model/chat_template.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kwb::model {

// One exported episode (a row of `kwb export rft` or `verl-sft`: OpenAI-style "messages" and a
// per-message "loss_mask") as the tokens a model was shown and which of them it wrote.
struct TokenizedConversation {
    std::vector<TokenId> tokens;
    std::vector<std::uint8_t> trained; // 1: a token of a trained (assistant) turn's own text
    std::string error;                 // set when the row cannot be used; the rest is empty
    // One per token when every trained turn came with the tokens the model sampled (the row's
    // "sampled_tokens"): each trained token's log-probability as drawn, 0 elsewhere. Empty
    // otherwise: the trainer then takes them from the policy before its update.
    std::vector<float> sampledLogprobs;
};

// Renders the conversation with the model's chat template, turn by turn (every template the
// workbench renders is prefix-stable), and marks as trained the tokens of each assistant turn
// the mask selects: its content and the end-of-turn marker, not the role header the prompt
// supplies. Tool calls are written into the assistant's text as Hermes-style
// "<tool_call>\n{"name":...,"arguments":{...}}\n</tool_call>" blocks (compact JSON) (the convention
// Qwen2.5 and most tool-tuned ChatML models follow); tool results are turns of role "tool". A row
// without "loss_mask" trains every assistant turn.
// An assistant turn with "sampled_tokens" (the row's per-message {"ids", "logprobs"}, as a
// local model's episode records them) is taken as those ids, not as its text tokenized again:
// re-tokenizing a reply need not give the ids the model drew, and PPO's ratio needs exactly those.
// A reply cut by the token limit ends without the end-of-turn marker; the template's marker then
// follows as context, not as something the model wrote.
TokenizedConversation tokenizeConversation(const nlohmann::json& row, const BpeTokenizer& tokenizer,
                                           const ChatTemplate& chat);

} // namespace kwb::model
