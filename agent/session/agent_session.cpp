#include "agent/session/agent_session.h"

#include "agent/llm/api_key.h"
#include "agent/llm/known_secrets.h"
#include "agent/llm/llm_provider.h"
#include "agent/providers/provider_factory.h"
#include "agent/store/trajectory_store.h"
#include "agent/tools/default_tools.h"
#include "agent/tools/tool_registry.h"
#include "engine/workspace/workspace.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace kwb::agent {

namespace fs = std::filesystem;

std::string freshAgentWorkspaceFolder(const std::string& taskPath) {
    std::error_code ec;
    const fs::path temp = fs::temp_directory_path(ec);
    if (ec)
        return {};
    std::string pattern =
        (temp / ("kwb-agent-" + fs::path(taskPath).stem().string() + "-XXXXXX")).string();
    // mkdtemp: a unique name even when several sessions of one process start at once.
    if (::mkdtemp(pattern.data()) == nullptr)
        return {};
    return pattern;
}

AgentSession::Prepared AgentSession::prepare(const AgentLaunch& launch,
                                             std::shared_ptr<SteeringController> steering) {
    Prepared out;
    // A fork always gets a new folder: the runner rebuilds the parent's files there.
    std::string workspace = launch.forkParent != 0 ? std::string() : launch.workspace;
    if (workspace.empty()) {
        workspace = freshAgentWorkspaceFolder(launch.taskPath);
        if (workspace.empty()) {
            out.error = "cannot create a workspace folder in the temp directory";
            return out;
        }
    }
    if (launch.forkParent == 0 && !isWorkspace(workspace)) {
        // The agent starts from the starter candidate, as in CUDA Agent.
        WorkspaceInitResult made = initWorkspace(launch.taskPath, workspace);
        if (!made.ok) {
            out.error = made.error;
            return out;
        }
    }

    // The provider's key and every credential in the environment are redacted from everything
    // the store writes, every tool result the model sees and the live text (secrets()).
    const std::string key = launch.provider.resolveApiKey().reveal();
    std::vector<std::string> secrets = knownSecrets({key});
    TrajectoryStoreOptions storeOptions;
    storeOptions.secrets = secrets;
    auto opened = TrajectoryStore::open(launch.storePath.empty() ? TrajectoryStore::defaultPath()
                                                                 : launch.storePath,
                                        std::move(storeOptions));
    if (!opened) {
        out.error = opened.error().message;
        return out;
    }

    std::unique_ptr<AgentSession> session(new AgentSession());
    session->steering_ = steering ? std::move(steering) : std::make_shared<SteeringController>();
    session->store_ = std::move(opened).value();
    // Episodes whose process died running them are closed before a new one starts, so that a
    // crash never leaves a row "running" for ever. A failure here does not stop the session.
    (void)session->store_->closeAbandoned();
    session->provider_ = makeProvider(launch.provider);
    ToolRegistryOptions toolOptions;
    toolOptions.secrets = secrets;
    session->tools_ = std::make_unique<ToolRegistry>(std::move(toolOptions));
    session->secrets_ = std::move(secrets);
    addDefaultTools(*session->tools_);
    session->forkParent_ = launch.forkParent;
    session->forkStep_ = launch.forkStep;

    EpisodeConfig& config = session->config_;
    config.taskPath = fs::absolute(launch.taskPath).string();
    config.workspace = fs::absolute(workspace).string();
    config.maxTurns = launch.maxTurns;
    config.model = launch.provider.model;
    config.providerDescription = redactSecrets(session->provider_->describe(), session->secrets_);
    config.python = launch.python;
    config.evaluation = launch.evaluation;
    config.finalEvaluation = launch.finalEvaluation;
    config.logprobs = launch.logprobs;
    config.tokenIds = launch.tokenIds;
    config.maxTokens = launch.maxTokens;
    config.temperature = launch.temperature;
    config.seed = launch.seed;
    // What resuming the episode later needs to reach the same model the same way (never the key
    // itself: only where it came from).
    config.extraSettings = {{"provider_kind", providerKindName(launch.provider.kind)},
                            {"base_url", launch.provider.effectiveBaseUrl()},
                            {"api_key_env", launch.provider.apiKeyEnv},
                            {"python", launch.python},
                            {"device", deviceChoiceName(launch.evaluation.device)}};
    if (launch.provider.kind == ProviderKind::LocalModel)
        config.extraSettings["local_device"] = launch.provider.localDevice;
    if (launch.extraSettings.is_object())
        for (const auto& [key, value] : launch.extraSettings.items())
            config.extraSettings[key] = value;
    session->evaluations_ = launch.evaluations
                                ? launch.evaluations
                                : std::make_shared<EvaluationService>(EvaluationServiceConfig{
                                      .python = launch.python, .concurrentEvaluations = 1});
    config.evaluations = session->evaluations_.get();
    out.session = std::move(session);
    return out;
}

AgentSession::~AgentSession() = default;

std::string AgentSession::providerDescription() const {
    // Printed live: every credential of the environment goes, not only the provider's own key.
    return redactSecrets(provider_->describe(), secrets_);
}

EpisodeRunResult AgentSession::run(StreamSink* observer) {
    EpisodeRunner runner(*store_, *provider_, *tools_, *steering_, config_, observer);
    return forkParent_ != 0 ? runner.forkFrom(forkParent_, forkStep_) : runner.run();
}

} // namespace kwb::agent
