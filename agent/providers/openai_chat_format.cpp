#include "agent/providers/openai_chat_format.h"

#include "agent/providers/http_llm_error.h"
#include "engine/system/bounded_json.h"

#include <cstdlib>

namespace kwb::agent {
namespace {

using nlohmann::json;

json wireMessage(const Message& message) {
    json wire = {{"role", roleName(message.role)}};
    switch (message.role) {
    case Role::System:
    case Role::User:
        wire["content"] = message.text;
        break;
    case Role::Assistant:
        // The API wants null, not "", beside tool calls.
        wire["content"] =
            message.text.empty() && !message.toolCalls.empty() ? json(nullptr) : json(message.text);
        if (!message.toolCalls.empty()) {
            json calls = json::array();
            for (const ToolCall& call : message.toolCalls)
                calls.push_back(
                    {{"id", call.id},
                     {"type", "function"},
                     {"function", {{"name", call.name}, {"arguments", call.argumentsJson}}}});
            wire["tool_calls"] = std::move(calls);
        }
        break;
    case Role::Tool:
        wire["tool_call_id"] = message.toolCallId;
        wire["content"] = message.text;
        break;
    }
    return wire;
}

std::optional<TokenUsage> usageFrom(const json& usage) {
    if (!usage.is_object())
        return std::nullopt;
    TokenUsage out;
    out.inputTokens = integerOr(usage, "prompt_tokens", 0);
    out.outputTokens = integerOr(usage, "completion_tokens", 0);
    const auto details = usage.find("prompt_tokens_details");
    if (details != usage.end() && details->is_object() && details->contains("cached_tokens") &&
        (*details)["cached_tokens"].is_number_integer())
        out.cachedInputTokens = (*details)["cached_tokens"].get<long long>();
    return out.clamped(); // the server's numbers: never negative or absurd
}

// Some servers send arguments as an object rather than the string the API defines.
std::string argumentsText(const json& arguments) {
    if (arguments.is_string())
        return arguments.get<std::string>();
    if (arguments.is_null())
        return {};
    return arguments.dump();
}

void appendSampledTokens(const json& logprobs, std::vector<SampledToken>& tokens) {
    if (!logprobs.is_object() || !logprobs.contains("content") || !logprobs["content"].is_array())
        return;
    for (const json& entry : logprobs["content"]) {
        if (!entry.is_object() || !entry.contains("token") || !entry["token"].is_string())
            continue;
        SampledToken token;
        token.token = entry["token"].get<std::string>();
        if (entry.contains("logprob") && entry["logprob"].is_number())
            token.logprob = entry["logprob"].get<double>();
        constexpr std::string_view kIdPrefix = "token_id:";
        if (token.token.starts_with(kIdPrefix)) {
            const std::string digits = token.token.substr(kIdPrefix.size());
            char* end = nullptr;
            const long long id = std::strtoll(digits.c_str(), &end, 10);
            if (!digits.empty() && end && *end == '\0' && id >= 0)
                token.id = id;
        }
        tokens.push_back(std::move(token));
    }
}

CompletionOutcome parseReply(std::string_view body) {
    const json reply = parseBoundedJson(body);
    if (!reply.is_object())
        return malformedResponse("", "the body is not a JSON object", body);
    if (reply.contains("error") && !reply["error"].is_null())
        return llmErrorFromApiError(reply["error"], "");
    const auto choices = reply.find("choices");
    if (choices == reply.end() || !choices->is_array() || choices->empty() ||
        !(*choices)[0].is_object() || !(*choices)[0].contains("message") ||
        !(*choices)[0]["message"].is_object())
        return malformedResponse("", "no choices[0].message", body);
    const json& choice = (*choices)[0];
    const json& message = choice["message"];

    CompletionResult result;
    result.text = stringOr(message, "content");
    if (const auto calls = message.find("tool_calls"); calls != message.end() && calls->is_array())
        for (const json& call : *calls) {
            if (!call.is_object() || !call.contains("function") || !call["function"].is_object())
                return malformedResponse("", "a tool call without a function", call.dump());
            const json& function = call["function"];
            ToolCall out{stringOr(call, "id"), stringOr(function, "name"),
                         argumentsText(function.value("arguments", json()))};
            if (out.argumentsJson.empty())
                out.argumentsJson = "{}";
            result.toolCalls.push_back(std::move(out));
        }
    result.rawStopReason = stringOr(choice, "finish_reason");
    result.stopReason = openAiStopReason(result.rawStopReason, !result.toolCalls.empty());
    if (const auto logprobs = choice.find("logprobs"); logprobs != choice.end())
        appendSampledTokens(*logprobs, result.tokens);
    result.usage = usageFrom(reply.value("usage", json()));
    result.model = stringOr(reply, "model");
    return result;
}

} // namespace

json openAiChatRequestBody(const CompletionRequest& request, const std::string& model) {
    json body = {{"model", model}, {"stream", request.stream}};
    json messages = json::array();
    for (const Message& message : request.messages)
        messages.push_back(wireMessage(message));
    body["messages"] = std::move(messages);
    if (request.stream)
        body["stream_options"] = {{"include_usage", true}};
    if (!request.tools.empty()) {
        json tools = json::array();
        for (const ToolSchema& tool : request.tools)
            tools.push_back({{"type", "function"},
                             {"function",
                              {{"name", tool.name},
                               {"description", tool.description},
                               {"parameters", tool.parameters}}}});
        body["tools"] = std::move(tools);
    }
    if (request.maxTokens)
        body["max_tokens"] = *request.maxTokens;
    if (request.temperature)
        body["temperature"] = *request.temperature;
    // OpenAI documents a signed 64-bit seed; the top bit is dropped rather than sent negative.
    if (request.seed)
        body["seed"] = static_cast<std::int64_t>(*request.seed & 0x7fffffffffffffffULL);
    if (!request.stop.empty())
        body["stop"] = request.stop;
    if (request.logprobs)
        body["logprobs"] = true;
    if (request.tokenIds)
        body["return_tokens_as_token_ids"] = true;
    return body;
}

StopReason openAiStopReason(std::string_view finishReason, bool hasToolCalls) {
    if (finishReason == "tool_calls" || finishReason == "function_call" ||
        (hasToolCalls && finishReason == "stop"))
        return StopReason::ToolUse;
    if (finishReason == "stop")
        return StopReason::EndTurn;
    if (finishReason == "length")
        return StopReason::MaxTokens;
    if (finishReason == "content_filter")
        return StopReason::ContentFilter;
    return StopReason::Unknown;
}

CompletionOutcome parseOpenAiChatResponse(std::string_view body) {
    try {
        return parseReply(body);
    } catch (const json::exception& e) {
        return malformedResponse("", e.what(), body);
    }
}

bool OpenAiChatStreamDecoder::onEvent(const SseEvent& event) {
    try {
        return handleEvent(event);
    } catch (const nlohmann::json::exception& e) {
        failure_ = malformedResponse("", e.what(), event.data);
        return false;
    }
}

bool OpenAiChatStreamDecoder::handleEvent(const SseEvent& event) {
    if (event.isDone()) {
        done_ = true;
        return false;
    }
    const json chunk = parseBoundedJson(event.data);
    if (!chunk.is_object()) {
        failure_ = malformedResponse("", "a stream event is not a JSON object", event.data);
        return false;
    }
    if (chunk.contains("error") && !chunk["error"].is_null()) {
        failure_ = llmErrorFromApiError(chunk["error"], "");
        return false;
    }
    if (result_.model.empty())
        result_.model = stringOr(chunk, "model");
    if (auto usage = usageFrom(chunk.value("usage", json())))
        result_.usage = usage;
    const auto choices = chunk.find("choices");
    if (choices == chunk.end() || !choices->is_array())
        return true;
    for (const json& choice : *choices) {
        if (!choice.is_object())
            continue;
        const auto index = choice.find("index");
        if (index != choice.end() && !jsonInteger(*index)) {
            failure_ = malformedResponse("", "a choice's \"index\" is not an integer", event.data);
            return false;
        }
        if (index != choice.end() && *jsonInteger(*index) != 0)
            continue; // only the first choice is asked for
        if (const auto delta = choice.find("delta"); delta != choice.end() && delta->is_object()) {
            // The first chunk often carries "content": "" beside the role: not output yet.
            if (const auto content = delta->find("content");
                content != delta->end() && content->is_string() &&
                !content->get_ref<const std::string&>().empty()) {
                const auto& text = content->get_ref<const std::string&>();
                result_.text += text;
                sink_.onTextDelta(text);
            }
            if (const auto calls = delta->find("tool_calls");
                calls != delta->end() && calls->is_array())
                for (const json& call : *calls)
                    if (call.is_object())
                        onToolCallDelta(call);
        }
        if (const auto logprobs = choice.find("logprobs"); logprobs != choice.end())
            appendSampledTokens(*logprobs, result_.tokens);
        if (const auto reason = choice.find("finish_reason");
            reason != choice.end() && reason->is_string())
            finishReason_ = reason->get<std::string>();
    }
    return true;
}

void OpenAiChatStreamDecoder::onToolCallDelta(const json& delta) {
    const std::string id = stringOr(delta, "id");
    long long wireIndex = 0;
    if (delta.contains("index") && delta["index"].is_number_integer()) {
        wireIndex = delta["index"].get<long long>();
    } else {
        // No index (some servers): a new id starts a new call, anything else continues the last.
        const bool continues =
            !result_.toolCalls.empty() && (id.empty() || id == result_.toolCalls.back().id);
        wireIndex =
            continues ? ordinalByWireIndex_.rbegin()->first
                      : (ordinalByWireIndex_.empty() ? 0 : ordinalByWireIndex_.rbegin()->first + 1);
    }
    const json function = delta.value("function", json::object());
    const std::string name = function.is_object() ? stringOr(function, "name") : "";
    auto [it, isNew] =
        ordinalByWireIndex_.try_emplace(wireIndex, static_cast<int>(result_.toolCalls.size()));
    const int ordinal = it->second;
    if (isNew) {
        result_.toolCalls.push_back({id, name, ""});
        sink_.onToolCallStart(ordinal, id, name);
    } else {
        ToolCall& call = result_.toolCalls[ordinal];
        if (call.id.empty())
            call.id = id;
        if (call.name.empty())
            call.name = name;
    }
    if (function.is_object() && function.contains("arguments")) {
        const std::string fragment = argumentsText(function["arguments"]);
        if (!fragment.empty()) {
            result_.toolCalls[ordinal].argumentsJson += fragment;
            sink_.onToolCallArgumentsDelta(ordinal, fragment);
        }
    }
}

CompletionResult OpenAiChatStreamDecoder::takeResult() {
    for (ToolCall& call : result_.toolCalls)
        if (call.argumentsJson.empty())
            call.argumentsJson = "{}";
    result_.rawStopReason = finishReason_;
    result_.stopReason = openAiStopReason(finishReason_, !result_.toolCalls.empty());
    return std::move(result_);
}

} // namespace kwb::agent
