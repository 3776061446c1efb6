#include "agent/providers/http_llm_provider.h"

#include "agent/providers/http_completion.h"

namespace kwb::agent {

HttpLlmProvider::HttpLlmProvider(ProviderSettings settings, std::string apiName,
                                 std::string_view endpointPath)
    : settings_(std::move(settings)), apiName_(std::move(apiName)) {
    key_ = settings_.resolveApiKey();
    keySource_ = settings_.keySourceText();
    settings_.apiKey.clear();
    if (!key_.empty())
        secrets_.push_back(key_.reveal());
    for (const auto& [name, value] : settings_.extraHeaders)
        if (isCredentialHeader(name) && !value.empty())
            secrets_.push_back(value);
    // The path goes before a query (Azure's ?api-version=...), not after it.
    const std::string base = settings_.effectiveBaseUrl();
    const auto query = base.find('?');
    endpoint_ = query == std::string::npos
                    ? base + std::string(endpointPath)
                    : base.substr(0, query) + std::string(endpointPath) + base.substr(query);
}

std::string HttpLlmProvider::describe() const {
    // Printed live and stored: a key inside the base URL (user:KEY@, ?key=) never shows.
    std::string text = apiName_ + " " + redactUrlCredentials(settings_.effectiveBaseUrl());
    if (!settings_.model.empty())
        text += " (" + settings_.model + ")";
    return redactSecrets(text, secrets_);
}

CompletionOutcome HttpLlmProvider::complete(const CompletionRequest& request, StreamSink& sink,
                                            std::stop_token stop) {
    std::lock_guard lock(mutex_);
    CompletionOutcome outcome = completeUnredacted(request, sink, stop);
    if (!outcome.ok()) {
        LlmError& error = outcome.error();
        if (error.kind == LlmErrorKind::Auth)
            error.message += " (" + keySource_ + ")";
        error.message = redactSecrets(error.message, secrets_);
    }
    return outcome;
}

CompletionOutcome HttpLlmProvider::completeUnredacted(const CompletionRequest& request,
                                                      StreamSink& sink, std::stop_token stop) {
    const std::string& model = request.model.empty() ? settings_.model : request.model;
    if (model.empty())
        return LlmError{LlmErrorKind::InvalidRequest,
                        apiName_ + " " + endpoint_ + ": no model is configured"};
    if (stop.stop_requested())
        return LlmError{LlmErrorKind::Cancelled, "cancelled"};

    HttpRequest http;
    http.method = "POST";
    http.url = endpoint_;
    http.body = requestBody(request, model).dump();
    http.timeout = settings_.requestTimeout;
    http.connectTimeout = settings_.connectTimeout;
    // A whole reply is silent until it is done, so only a stream can be judged by its pauses.
    if (request.stream)
        http.idleTimeout = settings_.idleTimeout;
    http.headers = {{"Content-Type", "application/json"},
                    {"Accept", request.stream ? "text/event-stream" : "application/json"}};
    for (auto& header : authHeaders(key_))
        http.headers.push_back(std::move(header));
    // Last, so a deployment can override what the API needs (a proxy's own auth, a version).
    for (const auto& header : settings_.extraHeaders)
        http.headers.push_back(header);

    if (!request.stream)
        return fetchCompletion(
            client_, http, [this](std::string_view body) { return parseWholeResponse(body); }, sink,
            endpoint_, stop);
    const auto decoder = makeDecoder(sink);
    return streamCompletion(client_, http, *decoder, endpoint_, stop);
}

} // namespace kwb::agent
