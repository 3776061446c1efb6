#include "engine/service/service_server.h"

#include "engine/evaluation/evaluation_result.h"
#include "engine/service/evaluation_request_json.h"
#include "engine/service/line_socket.h"
#include "engine/service/wakeup_signal.h"
#include "engine/system/bounded_json.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

namespace kwb {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kMaxRequestBytes = 4u << 20;
constexpr auto kRequestPatience = 10s;

bool samePeerUser(int fd) {
    ucred peer{};
    socklen_t size = sizeof peer;
    return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 && peer.uid == ::geteuid();
}

} // namespace

struct ServiceServer::Connection {
    explicit Connection(int fd) : socket(fd) {}
    LineSocket socket;
    std::atomic<bool> done{false};
    std::jthread thread; // last: joined before the socket closes
};

ServiceServer::ServiceServer(ServeConfig config) : config_(std::move(config)) {}

ServiceServer::~ServiceServer() {
    stopRequested_ = true;
    if (listenFd_ >= 0) {
        ::close(listenFd_);
        ::unlink(config_.endpoint.socketPath.c_str());
    }
    // Connections cancel their evaluations once they see the stop, then end; only then may the
    // service they submitted to go.
    connections_.clear();
    service_.reset();
}

ServiceServer::Listen ServiceServer::listen(std::string* error) {
    auto fail = [&](const std::string& why) {
        if (error)
            *error = why;
        return Listen::Failed;
    };
    if (const std::string why = prepareEndpointDirectory(config_.endpoint); !why.empty())
        return fail(why);
    const ServiceEndpoint& e = config_.endpoint;
    if (e.socketPath.size() >= sizeof(sockaddr_un{}.sun_path))
        return fail("the socket path " + e.socketPath + " is too long for a Unix socket");
    std::string why;
    bool heldByOther = false;
    lock_ = ExclusiveFileLock::tryAcquire(e.lockPath, &why, &heldByOther);
    if (!lock_ && !heldByOther)
        return fail(why);
    if (!lock_) {
        if (error)
            *error = "another kwb serve already serves this configuration (" + e.socketPath + ", " +
                     why + ")";
        return Listen::AlreadyRunning;
    }
    // The lock is ours, so a socket file left behind is a dead daemon's.
    ::unlink(e.socketPath.c_str());
    listenFd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listenFd_ < 0)
        return fail(std::string("cannot create a socket: ") + std::strerror(errno));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, e.socketPath.c_str(), e.socketPath.size() + 1);
    const mode_t previous = ::umask(0177); // the socket is born owner-only
    const int bound =
        ::bind(listenFd_, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    ::umask(previous);
    if (bound != 0 || ::listen(listenFd_, 64) != 0) {
        const std::string why = std::strerror(errno);
        ::close(listenFd_);
        listenFd_ = -1;
        return fail("cannot listen on " + e.socketPath + ": " + why);
    }
    service_ = std::make_unique<EvaluationService>(config_.service);
    return Listen::Listening;
}

std::string ServiceServer::run(const std::atomic<bool>* interrupted) {
    auto lastBusy = std::chrono::steady_clock::now();
    while (true) {
        if (interrupted && interrupted->load())
            return "interrupted";
        if (stopRequested_)
            return "stop request";
        pollfd p{listenFd_, POLLIN, 0};
        if (::poll(&p, 1, 250) > 0 && (p.revents & POLLIN)) {
            const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd >= 0) {
                // Progress lines are sent from the service's worker threads: a client that stops
                // reading must not stall an evaluation, so a send gives up after a while and the
                // connection counts as gone.
                const timeval patience{5, 0};
                ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &patience, sizeof patience);
                auto connection = std::make_shared<Connection>(fd);
                ++activeConnections_;
                // The list owns the connection; its thread only borrows it, so that the last
                // owner never is the thread itself (which would then join itself).
                connection->thread = std::jthread([this, raw = connection.get()] {
                    serve(*raw);
                    --activeConnections_;
                    raw->done = true;
                });
                connections_.push_back(connection);
            }
        }
        pruneConnections();
        const auto now = std::chrono::steady_clock::now();
        if (activeConnections_ > 0 || service_->queued() + service_->running() > 0)
            lastBusy = now;
        else if (config_.idleExit.count() > 0 && now - lastBusy >= config_.idleExit)
            return "idle";
    }
}

void ServiceServer::pruneConnections() {
    connections_.remove_if([](const std::shared_ptr<Connection>& c) { return c->done.load(); });
}

void ServiceServer::serve(Connection& connection) {
    LineSocket& socket = connection.socket;
    if (!samePeerUser(socket.fd())) {
        socket.send({{"error", "this daemon serves only its own user"}});
        return;
    }
    std::string line;
    const LineSocket::Read read = socket.readLine(line, kRequestPatience, kMaxRequestBytes);
    if (read != LineSocket::Read::Line) {
        socket.send(
            {{"error", read == LineSocket::Read::TooLong ? "the request is longer than 4 MiB"
                                                         : "no request line arrived"}});
        return;
    }
    std::string parseError;
    const json request =
        parseBoundedJson(line, {.maxBytes = kMaxRequestBytes, .maxDepth = 32}, &parseError);
    if (request.is_discarded() || !request.is_object()) {
        socket.send({{"error", "the request is not a JSON object: " + parseError}});
        return;
    }
    const std::string op = stringOr(request, "op");
    ++served_;
    if (op == "eval")
        evaluate(connection, request);
    else if (op == "baseline")
        baseline(connection, request);
    else if (op == "status")
        socket.send({{"status", status()}});
    else if (op == "stop") {
        socket.send({{"stopping", true}});
        stopRequested_ = true;
    } else
        socket.send({{"error", "unknown op '" + op + "' (eval, baseline, status, stop)"}});
}

void ServiceServer::evaluate(Connection& connection, const json& request) {
    LineSocket& socket = connection.socket;
    EvaluationRequest what;
    std::string error;
    const json target = request.contains("target") ? request["target"] : json();
    const json options = request.contains("options") ? request["options"] : json::object();
    if (!targetFromJson(target, what.target, &error) ||
        !optionsFromJson(options, what.options, &error)) {
        socket.send({{"error", "bad evaluation request: " + error}});
        return;
    }
    what.tag = stringOr(request, "tag", "client");
    // The ticket's end wakes this thread: polling its state every 200 ms held each result back
    // by up to 200 ms (the fast path's wall times came in steps of 0.2 s).
    auto finished = std::make_shared<WakeupSignal>();
    const EvaluationTicket ticket = service_->submit(
        std::move(what),
        {.progress =
             [&socket](const std::string& stage) {
                 socket.send({{"progress", stage}});
             },
         .done = [finished](EvaluationTicket, const EvaluationSnapshot&) { finished->signal(); }});
    // The client waits on its end of the socket: when it goes (Ctrl+C, a killed script) the
    // evaluation is cancelled wherever it is, queued or in a stage.
    bool cancelled = false;
    // A ticket the service no longer knows counts as finished (wait() then says it was lost):
    // with the wake-up readable, waiting for it otherwise would spin.
    while (service_->state(ticket).value_or(TicketState::Finished) != TicketState::Finished) {
        if (!cancelled &&
            (stopRequested_ || socket.broken() || socket.peerGone(200ms, finished->fd()))) {
            service_->cancel(ticket);
            cancelled = true;
        }
        if (cancelled)
            std::this_thread::sleep_for(50ms);
    }
    const EvaluationSnapshot result = service_->wait(ticket);
    if (result)
        socket.send({{"result", toJson(*result)}});
    else
        socket.send({{"error", "the evaluation's ticket was lost"}});
}

void ServiceServer::baseline(Connection& connection, const json& request) {
    EvaluationOptions options;
    std::string error;
    const std::string task = stringOr(request, "task");
    if (task.empty()) {
        connection.socket.send({{"error", "bad baseline request: no task"}});
        return;
    }
    if (!optionsFromJson(request.contains("options") ? request["options"] : json::object(), options,
                         &error)) {
        connection.socket.send({{"error", "bad baseline request: " + error}});
        return;
    }
    connection.socket.send({{"result", toJson(service_->evaluator().baseline(task, options))}});
}

json ServiceServer::status() const {
    const double uptime =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    return {{"pid", ::getpid()},
            {"fingerprint", config_.fingerprint},
            {"socket", config_.endpoint.socketPath},
            {"python", service_->evaluator().python()},
            {"uptime_s", uptime},
            {"idle_exit_s", config_.idleExit.count()},
            // What `--concurrent` set: a daemon already serving keeps its own, whatever a later
            // `kwb serve` asks for.
            {"concurrent_evaluations", config_.service.concurrentEvaluations},
            {"queued", service_->queued()},
            {"running", service_->running()},
            {"connections", activeConnections_.load()},
            {"requests_served", served_.load()},
            {"gpu_lanes", service_->gpuLanes()}};
}

} // namespace kwb
