#include "agent/rollout/run_export.h"

#include "agent/rollout/group_advantages.h"
#include "agent/rollout/rollout_metrics.h"
#include "agent/rollout/run_advantages.h"
#include "agent/store/episode_export.h"
#include "agent/tools/default_tools.h"
#include "agent/tools/tool_registry.h"

#include <algorithm>
#include <map>
#include <set>

namespace kwb::agent {
namespace {

using nlohmann::json;

// An OpenAI chat message from a stored message event; `trained` says whether the model wrote it.
json chatMessage(const json& payload, bool& trained) {
    const std::string role = payload.value("role", "");
    json message = {{"role", role}, {"content", payload.value("text", "")}};
    trained = role == "assistant";
    if (payload.contains("tool_calls") && payload["tool_calls"].is_array() &&
        !payload["tool_calls"].empty()) {
        json calls = json::array();
        for (const json& call : payload["tool_calls"])
            calls.push_back({{"id", call.value("id", "")},
                             {"type", "function"},
                             {"function",
                              {{"name", call.value("name", "")},
                               {"arguments", call.value("arguments", "{}")}}}});
        message["tool_calls"] = std::move(calls);
    }
    if (role == "tool")
        message["tool_call_id"] = payload.value("tool_call_id", "");
    return message;
}

json toolFunctions() {
    ToolRegistry registry;
    addDefaultTools(registry);
    json tools = json::array();
    for (const ToolSchema& schema : registry.schemas())
        tools.push_back({{"type", "function"},
                         {"function",
                          {{"name", schema.name},
                           {"description", schema.description},
                           {"parameters", schema.parameters}}}});
    return tools;
}

struct Conversation {
    json messages = json::array();
    json lossMask = json::array();
    json sampledTokens = json::array(); // per message: the reply's tokens and logprobs, or null
    bool looped = false;
    bool invalidCall = false;
};

Conversation conversationOf(const std::vector<EpisodeEvent>& events) {
    Conversation c;
    for (const EpisodeEvent& e : events) {
        switch (e.kind) {
        case EventKind::SystemPrompt:
        case EventKind::UserMessage:
        case EventKind::AssistantMessage:
        case EventKind::ToolResult: {
            bool trained = false;
            c.messages.push_back(chatMessage(e.payload, trained));
            c.lossMask.push_back(trained ? 1 : 0);
            c.sampledTokens.push_back(e.payload.contains("tokens") ? e.payload["tokens"] : json());
            if (e.kind == EventKind::ToolResult && e.payload.value("tool_error", false)) {
                // Episodes recorded before the runner marked malformed calls are known by the
                // registry's words ("<tool>: the arguments are not valid JSON: ...").
                const std::string text = e.payload.value("text", "");
                if (e.payload.value("invalid_call", false) || text.starts_with("unknown tool '") ||
                    text.find(": the arguments are not valid JSON") != std::string::npos)
                    c.invalidCall = true;
            }
            break;
        }
        case EventKind::Status:
            if (e.payload.value("message", "").starts_with("stuck: "))
                c.looped = true;
            break;
        default:
            break;
        }
    }
    return c;
}

} // namespace

std::optional<RunExportFormat> parseRunExportFormat(const std::string& name) {
    if (name == "verl")
        return RunExportFormat::Verl;
    if (name == "verl-sft")
        return RunExportFormat::VerlSft;
    if (name == "rft")
        return RunExportFormat::Rft;
    if (name == "openrlhf")
        return RunExportFormat::OpenRlhf;
    if (name == "jsonl")
        return RunExportFormat::Jsonl;
    return std::nullopt;
}

StoreResult<std::size_t> exportRun(TrajectoryStore& store, RunId run,
                                   const RunExportOptions& options, std::ostream& out) {
    auto loaded = store.loadRun(run);
    if (!loaded)
        return loaded.error();
    auto listed = store.listEpisodes(EpisodeFilter::everyEpisodeOf(run));
    if (!listed)
        return listed.error();
    std::vector<EpisodeRecord> episodes = listed.value();
    // Oldest first: the order they ran in.
    std::reverse(episodes.begin(), episodes.end());

    if (options.format == RunExportFormat::Jsonl) {
        std::vector<EpisodeId> ids;
        for (const EpisodeRecord& e : episodes)
            ids.push_back(e.id);
        return exportEpisodes(store, ids, out);
    }

    std::size_t rows = 0;
    if (options.format == RunExportFormat::Verl) {
        std::set<std::string> seen;
        for (const EpisodeRecord& e : episodes) {
            const std::string task = e.settings.value("run_task", e.task);
            if (!seen.insert(task).second)
                continue;
            auto events = store.loadEvents(e.id);
            if (!events)
                return events.error();
            json prompt = json::array();
            for (const EpisodeEvent& event : events.value()) {
                if (event.kind != EventKind::SystemPrompt && event.kind != EventKind::UserMessage)
                    continue;
                bool trained = false;
                prompt.push_back(chatMessage(event.payload, trained));
                if (event.kind == EventKind::UserMessage)
                    break;
            }
            const json row = {{"data_source", "kernel_workbench"},
                              {"prompt", prompt},
                              {"ability", "cuda_kernel_optimization"},
                              {"reward_model", {{"style", "rule"}, {"ground_truth", task}}},
                              {"extra_info",
                               {{"index", rows},
                                {"task", task},
                                {"task_file", e.task},
                                {"level", e.settings.value("task_level", 0)},
                                {"run", run},
                                {"task_set", loaded.value().taskSet}}}};
            out << row.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
            ++rows;
        }
        return rows;
    }

    // GRPO's advantage of every settled episode within its task's group.
    std::map<EpisodeId, double> advantageOf;
    for (const EpisodeAdvantage& a : runAdvantages(episodes, run, 0))
        advantageOf[a.episode] = a.advantage;
    // What the rollout stored as each group filled wins; a store from before it kept them (or an
    // episode scored since) gets the same formulas here.
    std::map<EpisodeId, EpisodeAdvantage> stored;
    if (auto loadedValues = store.loadAdvantages(run))
        for (EpisodeAdvantage& a : loadedValues.value()) {
            advantageOf[a.episode] = a.advantage;
            stored[a.episode] = std::move(a);
        }

    const json tools = toolFunctions();
    for (const EpisodeRecord& e : episodes) {
        if (!isScoredOutcome(e.status, e.endCause))
            continue;
        const double reward = e.reward.value_or(-1.0);
        if (options.format == RunExportFormat::Rft && reward < options.minReward)
            continue;
        auto events = store.loadEvents(e.id);
        if (!events)
            return events.error();
        const Conversation c = conversationOf(events.value());
        if (options.format == RunExportFormat::Rft && (c.looped || c.invalidCall))
            continue;
        const std::string task = e.settings.value("run_task", e.task);
        if (options.format == RunExportFormat::OpenRlhf) {
            // The prompt ends with the first user message; everything after is the rollout.
            json input = json::array(), output = json::array();
            for (const json& message : c.messages) {
                const bool prompt =
                    output.empty() && (input.empty() || input.back()["role"] != "user");
                (prompt ? input : output).push_back(message);
            }
            const json row = {{"input", input},
                              {"label", task},
                              {"datasource", "kernel_workbench"},
                              {"output", output},
                              {"reward", reward},
                              {"advantage", advantageOf[e.id]},
                              {"episode", e.id},
                              {"sample", e.settings.value("run_sample", 0)},
                              {"run", run}};
            out << row.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
            ++rows;
            continue;
        }
        // PPO's returns and GAE per model turn (null for the other messages), the milestone
        // reward on the last turn; no critic has valued these turns yet, so V = 0.
        const auto modelTurns =
            static_cast<std::size_t>(std::count(c.lossMask.begin(), c.lossMask.end(), json(1)));
        TurnReturns ppo = milestoneTurnReturns(modelTurns, reward);
        if (const auto found = stored.find(e.id);
            found != stored.end() && found->second.turnReturns.size() == modelTurns &&
            found->second.turnGaeAdvantages.size() == modelTurns)
            ppo = {found->second.turnReturns, found->second.turnGaeAdvantages};
        json returns = json::array(), gae = json::array();
        for (std::size_t m = 0, turn = 0; m < c.lossMask.size(); ++m) {
            const bool model = c.lossMask[m] == 1;
            returns.push_back(model ? json(ppo.returns[turn]) : json(nullptr));
            gae.push_back(model ? json(ppo.advantages[turn]) : json(nullptr));
            turn += model ? 1 : 0;
        }
        const json row = {{"messages", c.messages},
                          {"tools", tools},
                          {"loss_mask", c.lossMask},
                          {"turn_returns", returns},
                          {"turn_gae_advantages", gae},
                          {"sampled_tokens", c.sampledTokens},
                          {"reward", reward},
                          {"advantage", advantageOf[e.id]},
                          {"extra_info",
                           {{"episode", e.id},
                            {"task", task},
                            {"sample", e.settings.value("run_sample", 0)},
                            {"run", run},
                            {"model", e.model}}}};
        out << row.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
        ++rows;
    }
    if (!out)
        return StoreError{"cannot write the export"};
    return rows;
}

} // namespace kwb::agent
