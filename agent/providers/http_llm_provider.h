#pragma once

#include "agent/llm/api_key.h"
#include "agent/llm/llm_provider.h"
#include "agent/llm/provider_settings.h"
#include "agent/providers/http_client.h"
#include "agent/providers/stream_decoder.h"

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kwb::agent {

// What the HTTP APIs have in common: POST JSON to one endpoint, stream the reply as
// server-sent events or read it whole, keep the key out of every message. Subclasses supply
// the wire format. No retries here: RetryingProvider adds them around any provider.
class HttpLlmProvider : public LlmProvider {
public:
    CompletionOutcome complete(const CompletionRequest& request, StreamSink& sink,
                               std::stop_token stop) final;
    std::string describe() const final;

    const std::string& endpoint() const { return endpoint_; }

protected:
    // `apiName` names the protocol in messages ("openai-compatible"); `endpointPath` is appended
    // to the base URL.
    HttpLlmProvider(ProviderSettings settings, std::string apiName, std::string_view endpointPath);

    virtual nlohmann::json requestBody(const CompletionRequest& request,
                                       const std::string& model) const = 0;
    virtual std::vector<std::pair<std::string, std::string>>
    authHeaders(const ApiKey& key) const = 0;
    virtual std::unique_ptr<StreamDecoder> makeDecoder(StreamSink& sink) const = 0;
    virtual CompletionOutcome parseWholeResponse(std::string_view body) const = 0;

    const ProviderSettings& settings() const { return settings_; }

private:
    CompletionOutcome completeUnredacted(const CompletionRequest& request, StreamSink& sink,
                                         std::stop_token stop);

    ProviderSettings settings_; // without the key, which lives only in key_
    ApiKey key_;
    std::string keySource_;
    std::vector<std::string> secrets_; // the key and credential header values, for redaction
    std::string apiName_;
    std::string endpoint_;
    std::mutex mutex_; // one transfer at a time on client_
    HttpClient client_;
};

} // namespace kwb::agent
