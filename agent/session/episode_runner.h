#pragma once

#include "agent/llm/conversation.h"
#include "agent/llm/llm_provider.h"
#include "agent/llm/stream_sink.h"
#include "agent/llm/token_usage.h"
#include "agent/session/episode_config.h"
#include "agent/session/steering.h"
#include "agent/store/episode_record.h"
#include "agent/store/trajectory_store.h"
#include "agent/tools/tool_registry.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kwb::agent {

// How run() or forkFrom() ended.
struct EpisodeRunResult {
    EpisodeId id = 0; // 0 when the store could not create the episode
    EpisodeStatus status = EpisodeStatus::Failed;
    std::optional<double> reward; // the final evaluation's milestone reward
    std::string cause;            // EpisodeRecord::endCause: "model_stopped", "turn_limit", ...
    std::string message;          // why it ended: "the model stopped", "turn limit (200)", ...
    int turns = 0;
    TokenUsage usage;
};

// Runs one ReAct episode on the calling thread: system prompt (the workspace's SKILL.md and the
// task), then model call -> tool calls -> tool results until the model answers without tool
// calls, the turn limit, stop(), stuckness or a provider error; then the final evaluation,
// whose reward is the episode's. Every step is an event in the store as it happens.
//
// Files: each workspace file the agent may change (everything but the protected files, dot
// folders, __pycache__ and build/, text under 1 MB) is tracked. The first events after the
// prompt record the initial contents ("initial": true); every later change, whether a tool
// reported it, Bash made it or the user edited it while paused, becomes a file_diff event with
// the full "before" and "after" text (null: no file) and a unified diff. A fork replays these
// events, so its workspace is exactly the parent's at the fork step.
class EpisodeRunner {
public:
    // All references must outlive the runner. `observer` receives the streamed deltas.
    EpisodeRunner(TrajectoryStore& store, LlmProvider& provider, ToolRegistry& tools,
                  SteeringController& steering, EpisodeConfig config,
                  StreamSink* observer = nullptr);
    ~EpisodeRunner();
    EpisodeRunner(const EpisodeRunner&) = delete;
    EpisodeRunner& operator=(const EpisodeRunner&) = delete;

    // A new episode in config.workspace (an initialised workspace).
    EpisodeRunResult run();

    // A new episode that continues `parent` from its event `step` (a sequence number): the
    // store copies events 1..step, the conversation is rebuilt from them, and config.workspace
    // (created or overwritten from the task) gets the parent's files as they were at that step.
    EpisodeRunResult forkFrom(EpisodeId parent, std::int64_t step);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace kwb::agent
