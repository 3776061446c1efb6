#include "agent/providers/http_completion.h"

#include "agent/llm/ascii_case.h"
#include "agent/providers/http_llm_error.h"

#include <chrono>
#include <vector>

namespace kwb::agent {
namespace {

LlmError withEndpoint(LlmError error, std::string_view endpoint) {
    error.message = std::string(endpoint) + ": " + error.message;
    return error;
}

bool succeeded(const HttpResponse& response) {
    return response.failure == HttpFailure::None && response.status >= 200 && response.status < 300;
}

void deliverWhole(const CompletionResult& result, StreamSink& sink) {
    if (!result.text.empty())
        sink.onTextDelta(result.text);
    for (std::size_t i = 0; i < result.toolCalls.size(); ++i) {
        const auto& call = result.toolCalls[i];
        sink.onToolCallStart(static_cast<int>(i), call.id, call.name);
        sink.onToolCallArgumentsDelta(static_cast<int>(i), call.argumentsJson);
    }
}

} // namespace

// Decision: only a reply that is demonstrably the server's failure is turned into an error.
// "abort"/"error" (vLLM and SGLang end an aborted or failed generation so) are failures whatever
// text came before them. A reply with no text, no tool call and no stop reason the API defines
// (a bare [DONE], message_start + message_stop, an unknown finish reason) is a failure too: no
// model produced it. A known stop reason ("stop", "end_turn") with empty text stays the model's
// own empty final answer and is scored; it is what the model sampled. A failure is retryable, so
// it is asked again within the retry budget and, when that runs out, ends the episode as an
// infrastructure error: an infrastructure failure is never a reward of -1.
std::optional<LlmError> serverFailureIn(const CompletionResult& result, std::string_view endpoint) {
    const std::string raw = asciiLowerCase(result.rawStopReason);
    for (const char* failed : {"abort", "aborted", "error", "cancelled", "canceled"})
        if (raw == failed)
            return LlmError(LlmErrorKind::Server,
                            std::string(endpoint) + ": the server ended the generation with \"" +
                                result.rawStopReason + "\"",
                            /*retryable=*/true);
    if (result.text.empty() && result.toolCalls.empty() && result.stopReason == StopReason::Unknown)
        return LlmError(LlmErrorKind::Server,
                        std::string(endpoint) +
                            (raw.empty() ? std::string(": the reply ended with no content and no "
                                                       "stop reason")
                                         : ": the reply ended with no content and the unknown "
                                           "stop reason \"" +
                                               result.rawStopReason + "\""),
                        /*retryable=*/true);
    return std::nullopt;
}

CompletionOutcome streamCompletion(HttpClient& client, const HttpRequest& request,
                                   StreamDecoder& decoder, std::string_view endpoint,
                                   std::stop_token stop) {
    SseParser parser;
    std::size_t bytes = 0;
    bool ended = false;
    // The idle timeout is measured from the last event, not the last byte: libcurl's low-speed
    // limit (which still catches a silent connection) counts keep-alive comments as progress,
    // so a server trickling ":" once a second held a turn for the whole request timeout.
    using Clock = std::chrono::steady_clock;
    Clock::time_point lastEvent = Clock::now();
    bool idle = false;
    const HttpResponse response = client.stream(
        request,
        [&](std::string_view chunk) {
            bytes += chunk.size();
            const std::vector<SseEvent> events = parser.feed(chunk);
            if (!events.empty()) {
                lastEvent = Clock::now();
            } else if (request.idleTimeout.count() > 0 &&
                       Clock::now() - lastEvent > request.idleTimeout) {
                idle = true;
                return false;
            }
            for (const SseEvent& event : events) {
                if (ended)
                    break;
                ended = !decoder.onEvent(event);
                if (decoder.failure())
                    return false;
            }
            // Nothing is read after the end marker: a server that holds the connection open
            // would otherwise keep a complete answer waiting for the idle timeout. The
            // connection is then not reused, which costs a new one per turn at most.
            return !ended;
        },
        stop);

    if (response.failure == HttpFailure::Cancelled)
        return LlmError{LlmErrorKind::Cancelled, "cancelled"};
    if (idle && !decoder.failure())
        return LlmError(LlmErrorKind::Timeout,
                        std::string(endpoint) + ": no event for " +
                            std::to_string(request.idleTimeout.count()) +
                            " s, only keep-alive bytes (" + std::to_string(bytes) +
                            " bytes of the stream)",
                        /*retryable=*/true);
    if (decoder.failure())
        return withEndpoint(*decoder.failure(), endpoint);
    // A connection that broke after the answer's end (its stop reason) but before the stream's
    // closing marker lost nothing of the answer, at most a trailing usage count.
    const bool brokeAfterTheAnswer = decoder.finished() && response.failure != HttpFailure::None &&
                                     response.status >= 200 && response.status < 300;
    if (!succeeded(response) && !brokeAfterTheAnswer) {
        LlmError error = llmErrorFromHttp(response, endpoint);
        if (response.failure != HttpFailure::None && bytes > 0)
            error.message += " (after " + std::to_string(bytes) + " bytes of the stream)";
        return error;
    }
    const auto contentType = response.header("content-type");
    if (!decoder.finished() && contentType &&
        contentType->find("text/event-stream") == std::string::npos)
        return malformedResponse(endpoint, "expected an event stream, got " + *contentType, "");
    if (!decoder.finished()) {
        // The server closed the response cleanly but early (a crash behind a proxy, a restart):
        // as transient as a broken connection.
        return LlmError(LlmErrorKind::Network,
                        std::string(endpoint) + ": the stream ended after " +
                            std::to_string(bytes) + " bytes, before the response was complete",
                        /*retryable=*/true);
    }
    CompletionResult result = decoder.takeResult();
    if (auto failure = serverFailureIn(result, endpoint))
        return std::move(*failure);
    return result;
}

CompletionOutcome fetchCompletion(HttpClient& client, const HttpRequest& request,
                                  const WholeResponseParser& parse, StreamSink& sink,
                                  std::string_view endpoint, std::stop_token stop) {
    std::string body;
    // stream() rather than send(), only so that a stop ends the wait.
    const HttpResponse response = client.stream(
        request,
        [&](std::string_view chunk) {
            body.append(chunk);
            return true;
        },
        stop);
    if (!succeeded(response))
        return llmErrorFromHttp(response, endpoint);
    CompletionOutcome outcome = parse(body);
    if (!outcome.ok())
        return withEndpoint(std::move(outcome.error()), endpoint);
    if (auto failure = serverFailureIn(outcome.result(), endpoint))
        return std::move(*failure);
    deliverWhole(outcome.result(), sink);
    return outcome;
}

} // namespace kwb::agent
