#include "agent/episode_runner.h"
#include "agent/provider_factory.h"
#include "agent/steering.h"
#include "agent/tools/default_tools.h"
#include "agent/trajectory_store.h"
#include "commands.h"
#include "engine/user_directories.h"
#include "engine/workspace.h"
#include "episode_printer.h"

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace kwb::cli {
namespace {

namespace fs = std::filesystem;

std::string defaultStorePath() {
    return (fs::path(stateDirectory()) / "trajectories.db").string();
}

// Whether the streamed text left the cursor mid-line; event lines start on a fresh line.
std::atomic<bool> midLine{false};

// The model's text as it streams, so a person watching sees the agent think.
class ConsoleSink : public agent::StreamSink {
public:
    void onTextDelta(std::string_view text) override {
        std::cout << text << std::flush;
        if (!text.empty())
            midLine = text.back() != '\n';
    }
    void onRetry(int nextAttempt, std::chrono::milliseconds delay,
                 const agent::LlmError& reason) override {
        std::cerr << "\n[retry " << nextAttempt << " in " << delay.count()
                  << " ms: " << reason.message << "]\n";
    }
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
    agent::ProviderSettings settings = agent::ProviderSettings::defaultsFor(*kind);
    if (!o.baseUrl.empty())
        settings.baseUrl = o.baseUrl;
    settings.model = o.model;
    if (!o.apiKeyEnv.empty())
        settings.apiKeyEnv = o.apiKeyEnv;

    const std::string workspace =
        o.workspace.empty()
            ? (fs::temp_directory_path() /
               ("kwb-agent-" + fs::path(o.task).stem().string() + "-" + std::to_string(::getpid())))
                  .string()
            : o.workspace;
    if (!isWorkspace(workspace)) {
        // The agent starts from the starter candidate, as in CUDA Agent.
        WorkspaceInitResult made = initWorkspace(o.task, workspace);
        if (!made.ok) {
            std::cerr << "kwb: " << made.error << "\n";
            return kExitFailure;
        }
    }

    const std::string key = settings.resolveApiKey().reveal();
    auto opened = agent::TrajectoryStore::open(
        o.store.empty() ? defaultStorePath() : o.store,
        {key.empty() ? std::vector<std::string>{} : std::vector<std::string>{key}});
    if (!opened) {
        std::cerr << "kwb: " << opened.error().message << "\n";
        return kExitFailure;
    }
    agent::TrajectoryStore& store = *opened.value();
    std::unique_ptr<agent::LlmProvider> provider = agent::makeProvider(settings);
    agent::ToolRegistry tools;
    agent::addDefaultTools(tools);
    agent::SteeringController steering;

    agent::EpisodeConfig config;
    config.taskPath = fs::absolute(o.task).string();
    config.workspace = fs::absolute(workspace).string();
    config.maxTurns = o.maxTurns;
    config.model = o.model;
    config.providerDescription = provider->describe();
    config.python = o.python;
    config.evaluation.device = deviceChoiceFrom(o.device);

    std::cout << "workspace " << config.workspace << "\nprovider " << provider->describe()
              << "\nstore " << store.path() << "\n";
    // Every stored event is shown as it is written; the streamed text arrives in between.
    agent::Subscription live = store.subscribe([](const agent::StoreUpdate& update) {
        if (update.kind != agent::StoreUpdate::Kind::EventAppended ||
            update.event.kind == agent::EventKind::AssistantMessage)
            return;
        if (midLine.exchange(false))
            std::cout << "\n";
        printEvent(std::cout, update.event);
    });
    ConsoleSink sink;
    agent::EpisodeRunner runner(store, *provider, tools, steering, config, &sink);
    activeSteering = &steering;
    std::signal(SIGINT, stopOnSignal);
    agent::EpisodeRunResult result = runner.run();
    std::signal(SIGINT, SIG_DFL);
    activeSteering = nullptr;

    std::cout << "\nepisode " << result.id << " " << agent::episodeStatusName(result.status) << ": "
              << result.message
              << (result.reward ? ", reward " + std::to_string(static_cast<int>(*result.reward))
                                : std::string())
              << "\n";
    // The episode ran and is stored; a failed episode (provider error) is still a result.
    return result.id == 0 ? kExitFailure : kExitOk;
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
