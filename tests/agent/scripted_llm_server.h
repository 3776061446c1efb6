#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kwb::agent::test_support {

// Runs tests/agent/scripted_llm_server.py on 127.0.0.1 for one test: writes the script to a
// fresh folder, starts the server, reads its port; the destructor kills it.
class ScriptedLlmServer {
public:
    explicit ScriptedLlmServer(const nlohmann::json& script);
    ~ScriptedLlmServer();
    ScriptedLlmServer(const ScriptedLlmServer&) = delete;
    ScriptedLlmServer& operator=(const ScriptedLlmServer&) = delete;

    bool started() const { return port_ > 0; }
    const std::string& startError() const { return startError_; }
    int port() const { return port_; }
    std::string url(const std::string& path = "") const;

    // Every request received so far, in order: {"path", "headers" (lower-case names), "body",
    // "turn", "fault", "problem"}.
    std::vector<nlohmann::json> requests() const;

private:
    std::string folder_;
    pid_t pid_ = -1;
    int outFd_ = -1;
    int port_ = 0;
    std::string startError_;
};

// A port on 127.0.0.1 where nothing listens (bound once, then released).
int unusedLoopbackPort();

} // namespace kwb::agent::test_support
