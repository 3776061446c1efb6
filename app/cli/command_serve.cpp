#include "commands.h"
#include "daemon_evaluation.h"
#include "engine/service/service_client.h"
#include "engine/service/service_server.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <csignal>
#include <iostream>
#include <thread>

namespace kwb::cli {
namespace {

std::atomic<bool> interrupted{false};

void onSignal(int) {
    interrupted = true;
}

struct ServeOptions {
    std::string python;
    int idleExit = 0;
    // Compiles and verification run side by side; timed stages take turns per GPU anyway.
    unsigned concurrent = std::max(2u, std::thread::hardware_concurrency() / 4);
    int gpus = -1;
};

int runServer(const ServeOptions& o) {
    ServeConfig config;
    config.fingerprint = serviceFingerprint(o.python);
    config.endpoint = serviceEndpoint(config.fingerprint);
    config.idleExit = std::chrono::seconds(o.idleExit);
    config.service.python = o.python;
    config.service.concurrentEvaluations = o.concurrent;
    config.service.gpuCount = o.gpus;
    ServiceServer server(config);
    std::string error;
    switch (server.listen(&error)) {
    case ServiceServer::Listen::AlreadyRunning:
        std::cerr << "kwb serve: " << error << "\n";
        return kExitOk; // the configuration is served: what the caller wanted
    case ServiceServer::Listen::Failed:
        std::cerr << "kwb serve: " << error << "\n";
        return kExitFailure;
    case ServiceServer::Listen::Listening:
        break;
    }
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    std::signal(SIGPIPE, SIG_IGN);
    std::cerr << "kwb serve: listening on " << config.endpoint.socketPath << " (pid " << ::getpid()
              << (o.idleExit > 0 ? ", stops after " + std::to_string(o.idleExit) + " s idle"
                                 : std::string())
              << ")" << std::endl;
    const std::string why = server.run(&interrupted);
    std::cerr << "kwb serve: stopping (" << why << ")" << std::endl;
    return kExitOk;
}

int askDaemon(const std::string& python, const std::string& op, bool json) {
    ServiceClient client(serviceEndpoint(serviceFingerprint(python)));
    const ServiceReply reply = client.call({{"op", op}});
    if (!reply.reached) {
        std::cerr << "kwb serve: not running for this configuration (" << reply.error << ")\n";
        return op == "stop" ? kExitOk : kExitFailure;
    }
    if (!reply.error.empty()) {
        std::cerr << "kwb serve: " << reply.error << "\n";
        return kExitFailure;
    }
    if (json) {
        std::cout << reply.value.dump(2) << "\n";
    } else if (op == "status") {
        for (const auto& [key, value] : reply.value["status"].items())
            std::cout << key << ": "
                      << (value.is_string() ? value.get<std::string>() : value.dump()) << "\n";
    } else {
        std::cout << "kwb serve: stopping\n";
    }
    return kExitOk;
}

} // namespace

void addServeCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "serve", "The evaluation service as a local daemon on a Unix socket (owner only): "
                 "`kwb eval` and `kwb baseline` use it, keeping warm workers and cached "
                 "baselines between calls");
    auto o = std::make_shared<ServeOptions>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("--python", o->python, "Task Python (default: auto-detect)");
    cmd->add_option("--idle-exit", o->idleExit,
                    "Stop after this many seconds with nothing to do (0: never; daemons started "
                    "by `kwb eval` use " +
                        std::to_string(kDefaultIdleExitSeconds) + ")")
        ->check(CLI::Range(0, 7 * 86400));
    cmd->add_option("--concurrent", o->concurrent,
                    "Evaluations at once (timed stages still take turns on each GPU)")
        ->check(CLI::Range(1, 64));
    cmd->add_option("--gpus", o->gpus, "GPUs to give a lane each (default: all)")
        ->check(CLI::Range(0, 64));
    auto* status = cmd->add_subcommand("status", "Show the daemon serving this configuration");
    status->add_flag("--json", *json, "Print JSON");
    auto* stop = cmd->add_subcommand("stop", "Stop the daemon serving this configuration");
    status->callback([o, json] {
        if (const int code = askDaemon(o->python, "status", *json); code != kExitOk)
            throw CLI::RuntimeError(code);
    });
    stop->callback([o] { askDaemon(o->python, "stop", false); });
    cmd->callback([cmd, o] {
        if (!cmd->get_subcommands().empty())
            return;
        if (const int code = runServer(*o); code != kExitOk)
            throw CLI::RuntimeError(code);
    });
}

} // namespace kwb::cli
