#pragma once

#include "agent/llm/completion_outcome.h"
#include "agent/llm/stream_sink.h"
#include "agent/providers/http_client.h"
#include "agent/providers/stream_decoder.h"

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

namespace kwb::agent {

// The exchange both HTTP providers share: POST the request, then read the reply either as
// server-sent events through a decoder or whole through a parser, and turn every failure
// (transport, status, format, a cut-off stream) into an LlmError naming `endpoint`.

CompletionOutcome streamCompletion(HttpClient& client, const HttpRequest& request,
                                   StreamDecoder& decoder, std::string_view endpoint,
                                   std::stop_token stop);

// Parses a whole 2xx body; errors it returns lack the endpoint, which the caller adds.
using WholeResponseParser = std::function<CompletionOutcome(std::string_view body)>;

// Hands the finished result to `sink` in one go, so callers see the same calls either way.
CompletionOutcome fetchCompletion(HttpClient& client, const HttpRequest& request,
                                  const WholeResponseParser& parse, StreamSink& sink,
                                  std::string_view endpoint, std::stop_token stop);

// A complete-looking reply that is the server's failure rather than the model's answer (an
// aborted generation, a reply with nothing in it), as a retryable error; see the definition.
std::optional<LlmError> serverFailureIn(const CompletionResult& result, std::string_view endpoint);

} // namespace kwb::agent
