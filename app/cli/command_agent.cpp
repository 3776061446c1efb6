#include "agent/llm/known_secrets.h"
#include "agent/session/agent_session.h"
#include "agent/store/trajectory_store.h"
#include "commands.h"
#include "episode_printer.h"

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <iostream>
#include <optional>

namespace kwb::cli {
namespace {

// Whether the streamed text left the cursor mid-line; event lines start on a fresh line.
std::atomic<bool> midLine{false};

// Prints streamed text; the redactor holds back a tail that could begin a secret.
void printLive(std::string_view text) {
    std::cout << terminalSafe(text) << std::flush;
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

// Ctrl+C, and SIGTERM (a service manager, a job scheduler, `kill`), stop the episode cleanly:
// it is stored as stopped, and resumable, instead of being found abandoned at the next start.
std::atomic<agent::SteeringController*> activeSteering{nullptr};
extern "C" void stopOnSignal(int) {
    if (auto* steering = activeSteering.load())
        steering->stop();
}

struct AgentOptions {
    std::string task;
    std::string workspace;
    std::string provider; // empty: openai, or the resumed episode's
    std::string baseUrl;
    std::string model;
    std::string apiKeyEnv;
    int maxTurns = 0; // 0: 200, or the resumed episode's
    std::string store;
    std::string device;      // empty: auto, or the resumed episode's
    std::string modelDevice; // a local model's; empty: auto, or the resumed episode's
    std::string python;
    agent::EpisodeId resume = 0;
    bool logprobs = false;
    bool tokenIds = false;
    std::optional<int> maxTokens;      // per reply
    std::optional<double> temperature; // per reply
};

// `--resume`: the episode to continue, and every option not given taken from its record (the
// task, the model, how the provider was reached). Returns an error text, or empty.
std::string fillFromResumedEpisode(AgentOptions& o, agent::AgentLaunch& launch) {
    auto opened = agent::TrajectoryStore::open(storePathOr(o.store));
    if (!opened)
        return opened.error().message;
    agent::TrajectoryStore& store = *opened.value();
    // An episode whose process died is closed first: that is the episode to resume.
    (void)store.closeAbandoned();
    auto loaded = store.loadEpisode(o.resume);
    if (!loaded)
        return loaded.error().message;
    const agent::EpisodeRecord& record = loaded.value();
    const std::string id = std::to_string(record.id);
    if (record.status == agent::EpisodeStatus::Running)
        return "episode " + id + " is still running (in process " + record.owner +
               "); stop it first";
    if (record.status == agent::EpisodeStatus::Finished)
        return "episode " + id + " finished (" + record.endCause + "): there is nothing to resume";
    const nlohmann::json& settings = record.settings;
    auto setting = [&settings](const char* key) {
        return settings.is_object() && settings.contains(key) && settings[key].is_string()
                   ? settings[key].get<std::string>()
                   : std::string();
    };
    if (o.task.empty())
        o.task = record.task;
    if (o.model.empty())
        o.model = record.model;
    if (o.provider.empty())
        o.provider = setting("provider_kind");
    if (o.baseUrl.empty())
        o.baseUrl = setting("base_url");
    if (o.apiKeyEnv.empty())
        o.apiKeyEnv = setting("api_key_env");
    if (o.device.empty())
        o.device = setting("device");
    if (o.modelDevice.empty())
        o.modelDevice = setting("local_device");
    if (o.python.empty())
        o.python = setting("python");
    if (!o.maxTokens && settings.is_object() && settings.contains("max_tokens") &&
        settings["max_tokens"].is_number_integer())
        o.maxTokens = settings["max_tokens"].get<int>();
    if (!o.temperature && settings.is_object() && settings.contains("temperature") &&
        settings["temperature"].is_number())
        o.temperature = settings["temperature"].get<double>();
    if (settings.is_object() && settings.value("logprobs", false))
        o.logprobs = true;
    if (settings.is_object() && settings.value("token_ids", false))
        o.tokenIds = true;
    if (o.maxTurns == 0 && settings.is_object() && settings.contains("max_turns") &&
        settings["max_turns"].is_number_integer())
        o.maxTurns = settings["max_turns"].get<int>();
    launch.forkParent = record.id;
    launch.forkStep = record.lastSequence;
    return {};
}

int runAgent(AgentOptions o) {
    agent::AgentLaunch launch;
    if (o.resume != 0) {
        if (std::string error = fillFromResumedEpisode(o, launch); !error.empty()) {
            std::cerr << "kwb: cannot resume: " << error << "\n";
            return kExitFailure;
        }
    }
    if (o.task.empty() || o.model.empty()) {
        std::cerr << "kwb: --task and --model are required (or --resume EPISODE)\n";
        return kExitUsage;
    }
    if (o.provider.empty())
        o.provider = "openai";
    if (o.maxTurns == 0)
        o.maxTurns = 200;
    const auto kind = agent::parseProviderKind(o.provider);
    if (!kind) {
        std::cerr << "kwb: unknown provider '" << o.provider << "' (openai, anthropic or local)\n";
        return kExitUsage;
    }
    launch.provider = agent::ProviderSettings::defaultsFor(*kind);
    if (!o.baseUrl.empty())
        launch.provider.baseUrl = o.baseUrl;
    launch.provider.model = o.model;
    if (!o.modelDevice.empty())
        launch.provider.localDevice = o.modelDevice;
    if (!o.apiKeyEnv.empty())
        launch.provider.apiKeyEnv = o.apiKeyEnv;
    launch.taskPath = o.task;
    launch.workspace = o.workspace;
    launch.storePath = o.store;
    launch.maxTurns = o.maxTurns;
    launch.python = o.python;
    launch.evaluation.device = deviceChoiceFrom(o.device.empty() ? "auto" : o.device);
    launch.logprobs = o.logprobs || o.tokenIds;
    launch.tokenIds = o.tokenIds;
    launch.maxTokens = o.maxTokens;
    launch.temperature = o.temperature;

    agent::AgentSession::Prepared prepared = agent::AgentSession::prepare(launch);
    if (!prepared) {
        std::cerr << "kwb: " << prepared.error << "\n";
        return kExitFailure;
    }
    agent::AgentSession& session = *prepared.session;
    if (o.resume != 0)
        std::cout << "resuming episode " << o.resume << " from its step " << launch.forkStep
                  << "\n";
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
    std::signal(SIGTERM, stopOnSignal);
    agent::EpisodeRunResult result = session.run(&sink);
    printLive(redactor.flush());
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
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

void addProviderOptions(CLI::App* cmd, std::string& provider, std::string& modelDevice) {
    cmd->add_option("--provider", provider,
                    "openai (any OpenAI-compatible server), anthropic, or local (a model file run "
                    "by kwb-model on this machine: --model names its GGUF file or Hugging Face "
                    "folder)")
        ->check(CLI::IsMember({"openai", "anthropic", "local"}));
    cmd->add_option("--model-device", modelDevice,
                    "Where a local model runs: auto (the GPU when there is one), cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
}

void addReplyOptions(CLI::App* cmd, std::optional<int>& maxTokens,
                     std::optional<double>& temperature) {
    cmd->add_option("--max-tokens", maxTokens,
                    "Token limit per reply (default: the provider's; a local model on a CPU "
                    "needs a small one)")
        ->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--temperature", temperature,
                    "Sampling temperature (default: the provider's; 1 keeps a local model's "
                    "log-probabilities its own, as PPO needs)")
        ->check(CLI::Range(0.0, 10.0));
}

void addAgentCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand("agent", "Run an agent episode on a task, live, and store it");
    auto o = std::make_shared<AgentOptions>();
    cmd->add_option("--task", o->task, "KernelBench task file")->check(CLI::ExistingFile);
    addProviderOptions(cmd, o->provider, o->modelDevice);
    cmd->add_option("--base-url", o->baseUrl,
                    "API base URL (OpenAI-compatible: up to /v1; default: the official one)");
    cmd->add_option("--model", o->model, "Model name");
    cmd->add_option("--api-key-env", o->apiKeyEnv,
                    "Environment variable holding the key (default OPENAI_API_KEY / "
                    "ANTHROPIC_API_KEY)");
    cmd->add_option("--max-turns", o->maxTurns, "Turn limit")->check(CLI::Range(1, 10000));
    cmd->add_option("--workspace", o->workspace, "Workspace folder (created from the task)");
    cmd->add_option("--store", o->store, "Trajectory store (default: the state folder)");
    cmd->add_option("--device", o->device, "auto, cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option("--python", o->python, "Task Python (default: auto-detect)");
    cmd->add_option("--resume", o->resume,
                    "Continue an interrupted episode (stopped, cancelled, failed, an "
                    "infrastructure error, or one whose process died) as a new episode from its "
                    "last step, in a fresh workspace; options not given come from its record")
        ->check(CLI::PositiveNumber);
    cmd->add_flag("--logprobs", o->logprobs,
                  "Keep every reply's sampled tokens and log-probabilities (OpenAI-compatible "
                  "servers that return them)");
    cmd->add_flag("--token-ids", o->tokenIds,
                  "Ask for the tokens as ids as well (vLLM's return_tokens_as_token_ids)");
    addReplyOptions(cmd, o->maxTokens, o->temperature);
    cmd->callback([o] {
        if (int code = runAgent(*o); code != kExitOk)
            throw CLI::RuntimeError(code);
    });
}

} // namespace kwb::cli
