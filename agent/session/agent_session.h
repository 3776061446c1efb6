#pragma once

#include "agent/llm/provider_settings.h"
#include "agent/llm/stream_sink.h"
#include "agent/session/episode_config.h"
#include "agent/session/episode_runner.h"
#include "agent/session/steering.h"
#include "agent/store/episode_record.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kwb::agent {

class LlmProvider;
class ToolRegistry;
class TrajectoryStore;

// What starts an agent episode. `kwb agent` fills it from its options and the GUI from its
// dialog; AgentSession::prepare() turns it into a session the same way for both.
struct AgentLaunch {
    std::string taskPath;  // the KernelBench task file
    std::string workspace; // an existing workspace, or a folder to create; empty: a fresh one
    std::string storePath; // empty: TrajectoryStore::defaultPath()
    ProviderSettings provider;
    int maxTurns = 200;
    std::string python;           // the task interpreter; empty: auto-detect
    EvaluationOptions evaluation; // the Compile / Verify / Profile tools and the final evaluation
    bool finalEvaluation = true;
    // The process's evaluation service, shared by its sessions; null: the session makes its own
    // (for the same python), so its tools and final evaluation still share warm workers.
    std::shared_ptr<EvaluationService> evaluations;
    // Continue an episode instead of starting one: the new episode copies events 1..forkStep
    // of forkParent and always gets a fresh workspace, where the runner rebuilds the files.
    EpisodeId forkParent = 0;
    std::int64_t forkStep = 0;
    // Keep every reply's sampled tokens and log-probabilities (OpenAI-compatible servers), and
    // the tokens as ids where the server is vLLM (return_tokens_as_token_ids).
    bool logprobs = false;
    bool tokenIds = false;
    // Per reply: the token limit and the sampling temperature; unset: the provider's defaults.
    // A local model on a CPU needs a small limit to answer in seconds.
    std::optional<int> maxTokens;
    std::optional<double> temperature;
    std::optional<std::uint64_t> seed; // EpisodeConfig::seed
    // Merged into the episode's settings when it is created (a rollout's run, task and sample).
    nlohmann::json extraSettings = nlohmann::json::object();
};

// An assembled agent session: its workspace, the store (opened with the provider's key among
// the secrets it redacts), the provider, the default tools and the episode's configuration.
// prepare() does everything that may block (creating the workspace, opening SQLite), so it is
// called on the thread that will run() the session; the steering handle may be created earlier
// and shared, so a UI can pause or stop the session from its own thread at any time.
class AgentSession {
public:
    struct Prepared;
    static Prepared prepare(const AgentLaunch& launch,
                            std::shared_ptr<SteeringController> steering = nullptr);
    ~AgentSession();
    AgentSession(const AgentSession&) = delete;
    AgentSession& operator=(const AgentSession&) = delete;

    SteeringController& steering() { return *steering_; }
    TrajectoryStore& store() { return *store_; }
    const EpisodeConfig& config() const { return config_; }
    // Every secret this session redacts (the provider's key, credentials in the environment):
    // a front end that shows streamed text live redacts it with these (StreamRedactor).
    const std::vector<std::string>& secrets() const { return secrets_; }
    std::string providerDescription() const;

    // Runs the episode (or the fork) to its end on the calling thread; `observer` receives the
    // streamed text. The store's subscribers see every event as it is written.
    EpisodeRunResult run(StreamSink* observer = nullptr);

private:
    AgentSession() = default;

    // First: whatever runs an evaluation through it is gone before it is.
    std::shared_ptr<EvaluationService> evaluations_;
    std::shared_ptr<SteeringController> steering_;
    std::unique_ptr<TrajectoryStore> store_;
    std::unique_ptr<LlmProvider> provider_;
    std::unique_ptr<ToolRegistry> tools_;
    EpisodeConfig config_;
    std::vector<std::string> secrets_;
    EpisodeId forkParent_ = 0;
    std::int64_t forkStep_ = 0;
};

// The outcome of AgentSession::prepare(): a session, or why there is none.
struct AgentSession::Prepared {
    std::unique_ptr<AgentSession> session;
    std::string error;
    explicit operator bool() const { return session != nullptr; }
};

// A new empty folder for an agent's workspace under the temp directory, named after the task
// (kwb-agent-<task>-XXXXXX); it outlives the session. Empty when none could be made.
std::string freshAgentWorkspaceFolder(const std::string& taskPath);

} // namespace kwb::agent
