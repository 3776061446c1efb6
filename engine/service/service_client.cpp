#include "engine/service/service_client.h"

#include "engine/service/line_socket.h"
#include "engine/system/bounded_json.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace kwb {

using nlohmann::json;
using namespace std::chrono_literals;

int ServiceClient::connectSocket(std::string* error) const {
    if (const std::string why = prepareEndpointDirectory(endpoint_); !why.empty()) {
        if (error)
            *error = why;
        return -1;
    }
    const std::string& path = endpoint_.socketPath;
    sockaddr_un address{};
    if (path.size() >= sizeof address.sun_path) {
        if (error)
            *error = "the socket path " + path + " is too long";
        return -1;
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        if (error)
            *error = std::string("cannot create a socket: ") + std::strerror(errno);
        return -1;
    }
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        if (error)
            *error = "no kwb serve at " + path + " (" + std::strerror(errno) + ")";
        ::close(fd);
        return -1;
    }
    return fd;
}

bool ServiceClient::reachable() const {
    const ServiceReply reply = call({{"op", "status"}});
    return reply.reached && reply.value.contains("status");
}

ServiceReply ServiceClient::call(const json& request,
                                 const std::function<void(const std::string&)>& progress) const {
    ServiceReply reply;
    const int fd = connectSocket(&reply.error);
    if (fd < 0)
        return reply;
    reply.reached = true;
    LineSocket socket(fd);
    if (!socket.send(request)) {
        reply.error = "the daemon closed the connection before the request was sent";
        return reply;
    }
    const JsonLimits limits; // a result carries stage logs: the default size and depth limits
    while (true) {
        std::string line;
        const LineSocket::Read read = socket.readLine(line, 1000ms, limits.maxBytes);
        if (read == LineSocket::Read::Timeout)
            continue; // evaluations take as long as their stages' timeouts allow
        if (read != LineSocket::Read::Line) {
            reply.error = read == LineSocket::Read::TooLong
                              ? "the daemon's answer is longer than the limit"
                              : "the daemon closed the connection without an answer (it stopped "
                                "or crashed; its log is " +
                                    endpoint_.logPath + ")";
            return reply;
        }
        std::string parseError;
        json value = parseBoundedJson(line, limits, &parseError);
        if (value.is_discarded() || !value.is_object()) {
            reply.error = "the daemon sent a line that is not a JSON object: " + parseError;
            return reply;
        }
        if (value.contains("progress")) {
            if (progress && value["progress"].is_string())
                progress(value["progress"].get<std::string>());
            continue;
        }
        if (value.contains("error"))
            reply.error = stringOr(value, "error", "the daemon reported an error");
        reply.value = std::move(value);
        return reply;
    }
}

bool ServiceClient::startDaemon(const std::string& executable,
                                const std::vector<std::string>& serveArguments,
                                std::chrono::milliseconds patience, std::string* error) const {
    if (const std::string why = prepareEndpointDirectory(endpoint_); !why.empty()) {
        if (error)
            *error = why;
        return false;
    }
    std::vector<std::string> args{executable, "serve"};
    args.insert(args.end(), serveArguments.begin(), serveArguments.end());
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    // Its own session: the terminal's Ctrl+C for this command must not reach the daemon. Only
    // the log and /dev/null are its descriptors: a test runner waiting on this process's
    // output pipes must not wait for the daemon too.
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, endpoint_.logPath.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    pid_t pid = -1;
    const int spawned =
        ::posix_spawn(&pid, executable.c_str(), &actions, &attributes, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (spawned != 0) {
        if (error)
            *error = "cannot start " + executable + " serve: " + std::strerror(spawned);
        return false;
    }
    const auto deadline = std::chrono::steady_clock::now() + patience;
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
        if (reachable())
            return true;
        int status = 0;
        // A daemon that found another one serving exits at once; that one answers instead.
        if (!exited && ::waitpid(pid, &status, WNOHANG) == pid)
            exited = true;
        std::this_thread::sleep_for(50ms);
    }
    if (error)
        *error = "kwb serve did not answer within " + std::to_string(patience.count()) +
                 " ms (its log: " + endpoint_.logPath + ")";
    return false;
}

} // namespace kwb
