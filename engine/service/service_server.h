#pragma once

#include "engine/service/evaluation_service.h"
#include "engine/service/service_endpoint.h"
#include "engine/system/exclusive_file_lock.h"

#include <atomic>
#include <chrono>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace kwb {

struct ServeConfig {
    EvaluationServiceConfig service;
    ServiceEndpoint endpoint;
    std::string fingerprint;
    // Stop after this long with no connection and no evaluation; 0: never.
    std::chrono::seconds idleExit{900};
};

// `kwb serve`: the evaluation service behind a Unix socket that only this user can reach (the
// endpoint's folder is 0700, and every peer's uid is checked). Each connection carries one
// request, as one JSON line:
//   {"op": "eval", "target": {...}, "options": {...}, "tag": "cli"}
//       -> {"progress": "<stage>"} lines, then {"result": <the evaluation record>}
//          (a client that disconnects cancels its evaluation, wherever it is)
//   {"op": "baseline", "task": PATH, "options": {...}} -> {"result": ...}
//   {"op": "status"} -> {"status": {...}}
//   {"op": "stop"}   -> {"stopping": true}, then the daemon ends
// A request that cannot be read gets {"error": "..."}.
class ServiceServer {
public:
    explicit ServiceServer(ServeConfig config);
    ~ServiceServer(); // closes the socket, cancels what runs and waits for it
    ServiceServer(const ServiceServer&) = delete;
    ServiceServer& operator=(const ServiceServer&) = delete;

    enum class Listen { Listening, AlreadyRunning, Failed };
    // Takes the endpoint's lock and binds its socket; `error` says why not.
    Listen listen(std::string* error);
    // Serves until `interrupted` is set, a "stop" request comes, or the daemon was idle for
    // idleExit. Returns why it ended ("interrupted", "stop request", "idle").
    std::string run(const std::atomic<bool>* interrupted = nullptr);

private:
    struct Connection;
    void serve(Connection& connection);
    void evaluate(Connection& connection, const nlohmann::json& request);
    void baseline(Connection& connection, const nlohmann::json& request);
    nlohmann::json status() const;
    void pruneConnections();

    ServeConfig config_;
    std::unique_ptr<EvaluationService> service_;
    std::optional<ExclusiveFileLock> lock_; // one daemon per endpoint
    int listenFd_ = -1;
    std::atomic<bool> stopRequested_{false};
    std::atomic<int> activeConnections_{0};
    std::atomic<std::uint64_t> served_{0};
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::list<std::shared_ptr<Connection>> connections_;
};

} // namespace kwb
