#pragma once

#include "engine/service/service_endpoint.h"

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kwb {

// What came back for one request: the daemon's last line ({"result": ...}, {"status": ...},
// {"stopping": true} or {"error": ...}), or why nothing did.
struct ServiceReply {
    bool reached = false; // a daemon accepted the connection
    nlohmann::json value;
    std::string error; // set when no final line came back (or it was {"error": ...})
};

// The client side of `kwb serve` (ServiceServer's protocol).
class ServiceClient {
public:
    explicit ServiceClient(ServiceEndpoint endpoint) : endpoint_(std::move(endpoint)) {}

    bool reachable() const;
    // Sends one request and waits for its answer; {"progress": stage} lines on the way go to
    // `progress`. Closing the connection early (this process ending) cancels the daemon's work.
    ServiceReply call(const nlohmann::json& request,
                      const std::function<void(const std::string&)>& progress = {}) const;
    // Starts `executable serve <serveArguments>` in a session of its own (it outlives this
    // process; its output goes to the endpoint's log) and waits up to `patience` for it to
    // answer. True when a daemon answers, whoever started it.
    bool startDaemon(const std::string& executable, const std::vector<std::string>& serveArguments,
                     std::chrono::milliseconds patience, std::string* error) const;

    const ServiceEndpoint& endpoint() const { return endpoint_; }

private:
    int connectSocket(std::string* error) const;

    ServiceEndpoint endpoint_;
};

} // namespace kwb
