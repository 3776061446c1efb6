#include "agent/providers/anthropic_messages_format.h"

#include "agent/providers/http_llm_error.h"
#include "engine/system/bounded_json.h"

namespace kwb::agent {
namespace {

using nlohmann::json;

std::optional<std::int64_t> integerField(const json& object, const char* name) {
    const auto it = object.find(name);
    if (it == object.end())
        return std::nullopt;
    return jsonInteger(*it);
}

json contentBlocks(const Message& message) {
    json blocks = json::array();
    if (message.role == Role::Tool) {
        json block = {{"type", "tool_result"},
                      {"tool_use_id", message.toolCallId},
                      {"content", message.text}};
        if (message.toolError)
            block["is_error"] = true;
        blocks.push_back(std::move(block));
        return blocks;
    }
    // The API rejects empty text blocks.
    if (!message.text.empty())
        blocks.push_back({{"type", "text"}, {"text", message.text}});
    for (const ToolCall& call : message.toolCalls) {
        // tool_use input must be an object; arguments the model garbled are sent as {} (the
        // agent has already answered that call with an error).
        json input = call.parsedArguments();
        if (!input.is_object())
            input = json::object();
        blocks.push_back(
            {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", input}});
    }
    return blocks;
}

TokenUsage usageFrom(std::int64_t uncachedInput, std::optional<std::int64_t> cacheRead,
                     std::int64_t cacheWrite, std::int64_t output) {
    // The server's numbers, each clamped before they are added, so the sum cannot overflow;
    // clamped() below bounds the sum.
    TokenUsage usage;
    usage.inputTokens = TokenUsage::clamped(uncachedInput) +
                        TokenUsage::clamped(cacheRead.value_or(0)) +
                        TokenUsage::clamped(cacheWrite);
    usage.outputTokens = output;
    usage.cachedInputTokens = cacheRead;
    return usage.clamped();
}

CompletionOutcome parseReply(std::string_view body) {
    const json reply = parseBoundedJson(body);
    if (!reply.is_object())
        return malformedResponse("", "the body is not a JSON object", body);
    if (stringOr(reply, "type") == "error" || reply.contains("error"))
        return llmErrorFromApiError(reply.value("error", json::object()), "");
    const auto content = reply.find("content");
    if (content == reply.end() || !content->is_array())
        return malformedResponse("", "no content array", body);

    CompletionResult result;
    for (const json& block : *content) {
        const std::string type = block.is_object() ? stringOr(block, "type") : "";
        if (type == "text") {
            result.text += stringOr(block, "text");
        } else if (type == "tool_use") {
            result.toolCalls.push_back({stringOr(block, "id"), stringOr(block, "name"),
                                        block.value("input", json::object()).dump()});
        }
    }
    result.rawStopReason = stringOr(reply, "stop_reason");
    result.stopReason = anthropicStopReason(result.rawStopReason);
    result.model = stringOr(reply, "model");
    if (const auto usage = reply.find("usage"); usage != reply.end() && usage->is_object())
        result.usage = usageFrom(integerField(*usage, "input_tokens").value_or(0),
                                 integerField(*usage, "cache_read_input_tokens"),
                                 integerField(*usage, "cache_creation_input_tokens").value_or(0),
                                 integerField(*usage, "output_tokens").value_or(0));
    return result;
}

} // namespace

json anthropicMessagesRequestBody(const CompletionRequest& request, const std::string& model,
                                  int defaultMaxTokens) {
    json body = {{"model", model},
                 {"max_tokens", request.maxTokens.value_or(defaultMaxTokens)},
                 {"stream", request.stream}};
    std::string system;
    json messages = json::array();
    for (const Message& message : request.messages) {
        if (message.role == Role::System) {
            system += (system.empty() ? "" : "\n\n") + message.text;
            continue;
        }
        json blocks = contentBlocks(message);
        if (blocks.empty())
            continue;
        const char* role = message.role == Role::Assistant ? "assistant" : "user";
        if (!messages.empty() && messages.back()["role"] == role) {
            for (json& block : blocks)
                messages.back()["content"].push_back(std::move(block));
        } else {
            messages.push_back({{"role", role}, {"content", std::move(blocks)}});
        }
    }
    body["messages"] = std::move(messages);
    if (!system.empty())
        body["system"] = system;
    if (!request.tools.empty()) {
        json tools = json::array();
        for (const ToolSchema& tool : request.tools)
            tools.push_back({{"name", tool.name},
                             {"description", tool.description},
                             {"input_schema", tool.parameters}});
        body["tools"] = std::move(tools);
    }
    if (request.temperature)
        body["temperature"] = *request.temperature;
    if (!request.stop.empty())
        body["stop_sequences"] = request.stop;
    return body;
}

StopReason anthropicStopReason(std::string_view stopReason) {
    if (stopReason == "end_turn")
        return StopReason::EndTurn;
    if (stopReason == "tool_use")
        return StopReason::ToolUse;
    if (stopReason == "max_tokens")
        return StopReason::MaxTokens;
    if (stopReason == "stop_sequence")
        return StopReason::StopSequence;
    if (stopReason == "refusal")
        return StopReason::ContentFilter;
    return StopReason::Unknown;
}

CompletionOutcome parseAnthropicMessagesResponse(std::string_view body) {
    try {
        return parseReply(body);
    } catch (const json::exception& e) {
        return malformedResponse("", e.what(), body);
    }
}

bool AnthropicMessagesStreamDecoder::onEvent(const SseEvent& event) {
    try {
        return handleEvent(event);
    } catch (const json::exception& e) {
        failure_ = malformedResponse("", e.what(), event.data);
        return false;
    }
}

bool AnthropicMessagesStreamDecoder::handleEvent(const SseEvent& event) {
    const json data = parseBoundedJson(event.data);
    if (!data.is_object()) {
        failure_ = malformedResponse("", "a stream event is not a JSON object", event.data);
        return false;
    }
    const std::string type = stringOr(data, "type");
    if (type == "message_start") {
        const json message = data.value("message", json::object());
        result_.model = stringOr(message, "model");
        readUsage(message.value("usage", json::object()));
    } else if (type == "content_block_start") {
        const json block = data.value("content_block", json::object());
        const std::string blockType = stringOr(block, "type");
        if (blockType == "text") {
            const std::string text = stringOr(block, "text");
            if (!text.empty()) {
                result_.text += text;
                sink_.onTextDelta(text);
            }
        } else if (blockType == "tool_use") {
            const int ordinal = static_cast<int>(result_.toolCalls.size());
            toolOrdinalByBlock_[integerOr(data, "index", 0)] = ordinal;
            result_.toolCalls.push_back({stringOr(block, "id"), stringOr(block, "name"), ""});
            sink_.onToolCallStart(ordinal, result_.toolCalls.back().id,
                                  result_.toolCalls.back().name);
            // The input normally streams as input_json_delta; a server may send it whole here.
            const json input = block.value("input", json::object());
            if (input.is_object() && !input.empty()) {
                result_.toolCalls.back().argumentsJson = input.dump();
                sink_.onToolCallArgumentsDelta(ordinal, result_.toolCalls.back().argumentsJson);
            }
        }
    } else if (type == "content_block_delta") {
        const json delta = data.value("delta", json::object());
        const std::string deltaType = stringOr(delta, "type");
        if (deltaType == "text_delta") {
            const std::string text = stringOr(delta, "text");
            if (!text.empty()) {
                result_.text += text;
                sink_.onTextDelta(text);
            }
        } else if (deltaType == "input_json_delta") {
            const auto it = toolOrdinalByBlock_.find(integerOr(data, "index", 0));
            if (it == toolOrdinalByBlock_.end()) {
                failure_ = malformedResponse("", "input_json_delta for a block that is no tool_use",
                                             event.data);
                return false;
            }
            const std::string fragment = stringOr(delta, "partial_json");
            if (!fragment.empty()) {
                result_.toolCalls[it->second].argumentsJson += fragment;
                sink_.onToolCallArgumentsDelta(it->second, fragment);
            }
        }
        // thinking_delta, signature_delta, citations: not part of the result yet.
    } else if (type == "message_delta") {
        const json delta = data.value("delta", json::object());
        readUsage(data.value("usage", json::object()));
        // The stop reason completes the message: only message_stop, which carries nothing,
        // may follow, so the stream is not read further (a server that never sends
        // message_stop and holds the connection would keep the answer waiting).
        if (const std::string reason = stringOr(delta, "stop_reason"); !reason.empty()) {
            result_.rawStopReason = reason;
            return false;
        }
    } else if (type == "message_stop") {
        stopped_ = true;
        return false;
    } else if (type == "error") {
        failure_ = llmErrorFromApiError(data.value("error", json::object()), "");
        return false;
    }
    return true; // ping, content_block_stop and event types added after this was written
}

void AnthropicMessagesStreamDecoder::readUsage(const json& usage) {
    if (!usage.is_object())
        return;
    // message_delta repeats or updates the counts (output_tokens is cumulative), so the latest
    // value of each field wins.
    if (auto value = integerField(usage, "input_tokens")) {
        uncachedInput_ = *value;
        sawUsage_ = true;
    }
    if (auto value = integerField(usage, "cache_read_input_tokens"))
        cacheRead_ = value;
    if (auto value = integerField(usage, "cache_creation_input_tokens"))
        cacheWrite_ = *value;
    if (auto value = integerField(usage, "output_tokens")) {
        output_ = *value;
        sawUsage_ = true;
    }
}

CompletionResult AnthropicMessagesStreamDecoder::takeResult() {
    for (ToolCall& call : result_.toolCalls)
        if (call.argumentsJson.empty())
            call.argumentsJson = "{}";
    result_.stopReason = anthropicStopReason(result_.rawStopReason);
    if (sawUsage_)
        result_.usage = usageFrom(uncachedInput_, cacheRead_, cacheWrite_, output_);
    return std::move(result_);
}

} // namespace kwb::agent
