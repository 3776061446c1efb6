#pragma once
// Episodes built in memory or written through the real store API, for the agent-pane tests.

#include "agent/store/episode_record.h"
#include "agent/store/episode_snapshot.h"
#include "agent/store/trajectory_store.h"
#include "engine/evaluation/evaluation_result.h"

#include <array>
#include <nlohmann/json.hpp>
#include <string>

namespace kwb::ui::test {

// An evaluation event's payload as the runner stores it: the result's JSON plus its trigger.
inline nlohmann::json evaluationPayload(int reward, double vsEager, double vsCompile,
                                        const std::string& trigger = "Verify") {
    kwb::EvaluationResult result;
    result.compiled = true;
    result.correct = reward >= 0;
    result.reward = reward;
    result.speedupVsEager = vsEager;
    result.speedupVsCompile = vsCompile;
    result.rewardReason = "test reward " + std::to_string(reward);
    if (reward < 0)
        result.failureKind = "numerical_mismatch";
    nlohmann::json payload = kwb::toJson(result);
    payload["trigger"] = trigger;
    return payload;
}

inline agent::EpisodeEvent event(agent::EpisodeId episode, std::int64_t sequence,
                                 agent::EventKind kind, nlohmann::json payload) {
    agent::EpisodeEvent e;
    e.episodeId = episode;
    e.sequence = sequence;
    e.kind = kind;
    e.payload = std::move(payload);
    return e;
}

inline nlohmann::json assistant(const std::string& text) {
    return agent::messageToJson(agent::Message::assistant(text));
}

// An in-memory episode whose evaluations have these rewards and speed-ups (events 2, 4, ...),
// with an assistant message before each.
inline agent::EpisodeSnapshotPtr episodeWith(agent::EpisodeId id,
                                             const std::vector<std::array<double, 3>>& evaluations,
                                             const std::string& task = "tasks/level1/01_gelu.py") {
    agent::EpisodeTrajectory t;
    t.episode.id = id;
    t.episode.task = task;
    t.episode.model = "test-model";
    t.episode.status = agent::EpisodeStatus::Finished;
    std::int64_t sequence = 0;
    for (const auto& [reward, eager, compile] : evaluations) {
        t.events.push_back(
            event(id, ++sequence, agent::EventKind::AssistantMessage, assistant("trying")));
        t.events.push_back(event(id, ++sequence, agent::EventKind::Evaluation,
                                 evaluationPayload(static_cast<int>(reward), eager, compile)));
    }
    t.episode.lastSequence = sequence;
    return agent::makeEpisodeSnapshot(std::move(t));
}

} // namespace kwb::ui::test
