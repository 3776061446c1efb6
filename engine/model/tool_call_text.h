#pragma once

#include "engine/model/chat_template.h"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::model {

// How a local model sees tools and writes tool calls. One convention for every chat family the
// workbench renders, so that what training shows a model (tokenizeConversation) and what the
// agent asks it at run time (kwb-model serve) are the same text:
// - the tools, as one compact JSON object per line ({"name", "description", "parameters"})
//   between <tools> and </tools>, close the system turn with a short instruction;
// - an assistant turn writes each call after its text as a Hermes-style block,
//   "<tool_call>\n{"name":...,"arguments":{...}}\n</tool_call>" (Qwen2.5 and most tool-tuned
//   ChatML models were trained on this form);
// - a tool result is a turn of role "tool" (Llama 3's template names it "ipython").

// The text that closes the system turn when tools are offered; empty for no tools. `tools`
// holds OpenAI-style entries ({"type": "function", "function": {...}}) or bare
// {"name", "description", "parameters"} objects.
std::string toolInstructions(const nlohmann::json& tools);

// An assistant message (OpenAI style: "content" and "tool_calls" whose "arguments" may be a
// JSON string or an object) as the text the model writes.
std::string assistantText(const nlohmann::json& message);

// OpenAI-style messages (and the tools offered) as the turns the chat template renders: the tool
// instructions close the first system turn, or a system turn holding the template's default
// system prompt is put first. Content may be a string, null, or a list of text parts. Empty with
// `error` set when a message has no role or is of an unknown one.
std::vector<ChatTurn> conversationTurns(const nlohmann::json& messages, const nlohmann::json& tools,
                                        const ChatTemplate& chat, std::string* error);

struct ParsedToolCall {
    std::string name;
    // The arguments as JSON text; a block that is not JSON keeps its text as written, so the
    // agent can answer with a tool error rather than lose what the model meant.
    std::string argumentsJson = "{}";
};

struct ParsedReply {
    std::string content; // the text outside the tool-call blocks, trimmed
    std::vector<ParsedToolCall> calls;
};

// The tool calls in a reply the model wrote. A block cut short (no closing tag: the token limit
// came first) still counts; one with no recognisable function name stays part of the content.
// "parameters" is read as "arguments" (Llama 3.1's spelling).
ParsedReply parseToolCalls(std::string_view text);

} // namespace kwb::model
