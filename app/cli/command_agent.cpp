#include "agent/llm/known_secrets.h"
#include "agent/session/agent_session.h"
#include "agent/store/trajectory_store.h"
#include "commands.h"
#include "episode_printer.h"

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <iostream>

namespace kwb::cli {
namespace {

// Whether the streamed text left the cursor mid-line; event lines start on a fresh line.
std::atomic<bool> midLine{false};

// Prints streamed text; the redactor holds back a tail that could begin a secret.
void printLive(std::string_view text) {
    std::cout << text << std::flush;
    if (!text.empty())
        midLine = text.back() != '\n';
}

// The model's text as it streams, so a person watching sees the agent think. It is redacted
// like everything the store keeps: a model (or a server) echoing a key must not print it.
class ConsoleSink : public agent::StreamSink {
public:
    explicit ConsoleSink(agent::StreamRedactor& redactor) : redactor_(redactor) {}
    void onTextDelta(std::string_view text) override { printLive(redactor_.feed(text)); }
    void onRetry(int nextAttempt, std::chrono::milliseconds delay,
                 const agent::LlmError& reason) override {
        printLive(redactor_.flush());
        std::cerr << "\n[retry " << nextAttempt << " in " << delay.count()
                  << " ms: " << redactor_.redact(reason.message) << "]\n";
    }

private:
    agent::StreamRedactor& redactor_;
};

// Ctrl+C stops the episode cleanly (it is stored as stopped) instead of killing the process.
std::atomic<agent::SteeringController*> activeSteering{nullptr};
extern "C" void stopOnSignal(int) {
    if (auto* steering = activeSteering.load())
        steering->stop();
}

struct AgentOptions {
    std::string task;
    std::string workspace;
    std::string provider = "openai";
    std::string baseUrl;
    std::string model;
    std::string apiKeyEnv;
    int maxTurns = 200;
    std::string store;
    std::string device = "auto";
    std::string python;
};

int runAgent(const AgentOptions& o) {
    const auto kind = agent::parseProviderKind(o.provider);
    if (!kind) {
        std::cerr << "kwb: unknown provider '" << o.provider << "' (openai or anthropic)\n";
        return kExitUsage;
    }
    agent::AgentLaunch launch;
    launch.provider = agent::ProviderSettings::defaultsFor(*kind);
    if (!o.baseUrl.empty())
        launch.provider.baseUrl = o.baseUrl;
    launch.provider.model = o.model;
    if (!o.apiKeyEnv.empty())
        launch.provider.apiKeyEnv = o.apiKeyEnv;
    launch.taskPath = o.task;
    launch.workspace = o.workspace;
    launch.storePath = o.store;
    launch.maxTurns = o.maxTurns;
    launch.python = o.python;
    launch.evaluation.device = deviceChoiceFrom(o.device);

    agent::AgentSession::Prepared prepared = agent::AgentSession::prepare(launch);
    if (!prepared) {
        std::cerr << "kwb: " << prepared.error << "\n";
        return kExitFailure;
    }
    agent::AgentSession& session = *prepared.session;
    std::cout << "workspace " << session.config().workspace << "\nprovider "
              << session.providerDescription() << "\nstore " << session.store().path() << "\n";
    // Every stored event is shown as it is written; the streamed text arrives in between. Both
    // come on the runner's thread, so an event first prints what the redactor held back.
    agent::StreamRedactor redactor(session.secrets());
    agent::Subscription live =
        session.store().subscribe([&redactor](const agent::StoreUpdate& update) {
            if (update.kind != agent::StoreUpdate::Kind::EventAppended)
                return;
            printLive(redactor.flush());
            if (update.event.kind == agent::EventKind::AssistantMessage)
                return;
            if (midLine.exchange(false))
                std::cout << "\n";
            printEvent(std::cout, update.event);
        });
    ConsoleSink sink(redactor);
    activeSteering = &session.steering();
    std::signal(SIGINT, stopOnSignal);
    agent::EpisodeRunResult result = session.run(&sink);
    printLive(redactor.flush());
    std::signal(SIGINT, SIG_DFL);
    activeSteering = nullptr;

    std::cout << "\nepisode " << result.id << " " << agent::episodeStatusName(result.status) << ": "
              << result.message
              << (result.reward ? ", reward " + std::to_string(static_cast<int>(*result.reward))
                                : std::string())
              << "\n";
    // The episode is stored either way; the exit code says whether it ended as an episode
    // should (finished, or stopped on request) or not (failed, an infrastructure error).
    if (result.id == 0)
        return kExitFailure;
    const bool ended = result.status == agent::EpisodeStatus::Finished ||
                       result.status == agent::EpisodeStatus::Stopped;
    return ended ? kExitOk : kExitFailure;
}

} // namespace

void addAgentCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand("agent", "Run an agent episode on a task, live, and store it");
    auto o = std::make_shared<AgentOptions>();
    cmd->add_option("--task", o->task, "KernelBench task file")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--provider", o->provider, "openai (any OpenAI-compatible server) or anthropic")
        ->check(CLI::IsMember({"openai", "anthropic"}));
    cmd->add_option("--base-url", o->baseUrl,
                    "API base URL (OpenAI-compatible: up to /v1; default: the official one)");
    cmd->add_option("--model", o->model, "Model name")->required();
    cmd->add_option("--api-key-env", o->apiKeyEnv,
                    "Environment variable holding the key (default OPENAI_API_KEY / "
                    "ANTHROPIC_API_KEY)");
    cmd->add_option("--max-turns", o->maxTurns, "Turn limit")->check(CLI::Range(1, 10000));
    cmd->add_option("--workspace", o->workspace, "Workspace folder (created from the task)");
    cmd->add_option("--store", o->store, "Trajectory store (default: the state folder)");
    cmd->add_option("--device", o->device, "auto, cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option("--python", o->python, "Task Python (default: auto-detect)");
    cmd->callback([o] {
        if (int code = runAgent(*o); code != kExitOk)
            throw CLI::RuntimeError(code);
    });
}

} // namespace kwb::cli
