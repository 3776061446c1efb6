#include "scripted_llm_server.h"

#include <arpa/inet.h>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kwb::agent::test_support {
namespace {

std::string pythonForServer() {
    // The interpreter the other tests use; the server needs nothing beyond the standard library.
    const std::string configured = KWB_TEST_EXPECTED_PYTHON;
    if (!configured.empty() && access(configured.c_str(), X_OK) == 0)
        return configured;
    return "/usr/bin/python3";
}

// The "PORT <n>" line, waiting at most a few seconds for the server to come up.
std::string readFirstLine(int fd) {
    std::string line;
    char c = 0;
    while (line.size() < 64) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0 || read(fd, &c, 1) != 1 || c == '\n')
            break;
        line.push_back(c);
    }
    return line;
}

} // namespace

ScriptedLlmServer::ScriptedLlmServer(const nlohmann::json& script) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kwb-scripted-llm-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
        startError_ = "mkdtemp failed";
        return;
    }
    folder_ = pattern;
    const std::string scriptPath = folder_ + "/script.json";
    const std::string logPath = folder_ + "/requests.jsonl";
    std::ofstream(scriptPath) << script.dump(2);
    std::ofstream(logPath).flush(); // exists even before the first request

    int out[2];
    if (pipe(out) != 0) {
        startError_ = "pipe failed";
        return;
    }
    const std::string python = pythonForServer();
    const std::string server = KWB_SCRIPTED_LLM_SERVER;
    pid_ = fork();
    if (pid_ == 0) {
        setpgid(0, 0);
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        execl(python.c_str(), python.c_str(), server.c_str(), scriptPath.c_str(), logPath.c_str(),
              static_cast<char*>(nullptr));
        _exit(127);
    }
    close(out[1]);
    // The pipe stays open while the server lives, so its later writes cannot fail.
    outFd_ = out[0];
    const std::string line = readFirstLine(outFd_);
    if (line.rfind("PORT ", 0) == 0)
        port_ = std::atoi(line.c_str() + 5);
    if (port_ <= 0)
        startError_ =
            "the scripted server (" + python + " " + server + ") printed no port: '" + line + "'";
}

ScriptedLlmServer::~ScriptedLlmServer() {
    if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    if (outFd_ >= 0)
        close(outFd_);
    if (!folder_.empty()) {
        std::error_code ignored;
        std::filesystem::remove_all(folder_, ignored);
    }
}

std::string ScriptedLlmServer::url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
}

std::vector<nlohmann::json> ScriptedLlmServer::requests() const {
    std::vector<nlohmann::json> out;
    std::ifstream log(folder_ + "/requests.jsonl");
    for (std::string line; std::getline(log, line);)
        if (!line.empty())
            out.push_back(nlohmann::json::parse(line));
    return out;
}

int unusedLoopbackPort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof(address);
    int port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
        port = ntohs(address.sin_port);
    close(fd);
    return port;
}

} // namespace kwb::agent::test_support
