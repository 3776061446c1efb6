#include "agent/rollout/rollout_metrics.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

namespace kwb::agent {
namespace {

using nlohmann::json;

std::optional<double> positiveNumber(const json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_number())
        return std::nullopt;
    const double value = object[key].get<double>();
    return std::isfinite(value) && value > 0 ? std::optional<double>(value) : std::nullopt;
}

int levelFromPath(const std::string& task) {
    static const std::regex level(R"((^|/)level([1-9][0-9]?)/)");
    std::smatch match;
    return std::regex_search(task, match, level) ? std::stoi(match[2].str()) : 0;
}

double share(int count, int of) {
    return of > 0 ? static_cast<double>(count) / of : 0.0;
}

std::optional<double> geomean(const std::vector<double>& values) {
    if (values.empty())
        return std::nullopt;
    double logs = 0.0;
    for (double v : values)
        logs += std::log(v);
    return std::exp(logs / static_cast<double>(values.size()));
}

MetricsGroup summarize(const std::vector<const RolloutEpisode*>& episodes) {
    MetricsGroup g;
    int passed = 0, fasterEager = 0, fasterCompile = 0, flagged = 0;
    double rewardSum = 0.0, turnSum = 0.0, tokenSum = 0.0, costSum = 0.0, gpuSum = 0.0;
    int gpuEvaluations = 0;
    std::vector<double> vsEager, vsCompile;
    std::map<double, int> fastEager, fastCompile;
    for (const RolloutEpisode* e : episodes) {
        if (e->status == EpisodeStatus::Running)
            continue;
        ++g.episodes;
        turnSum += e->turns;
        tokenSum += static_cast<double>(e->tokens);
        costSum += e->costUsd;
        if (e->status == EpisodeStatus::InfrastructureError)
            ++g.infrastructureErrors;
        if (e->status == EpisodeStatus::Failed)
            ++g.taskFailures;
        if (e->gpuSeconds) {
            gpuSum += *e->gpuSeconds;
            ++gpuEvaluations;
        }
        if (!isScoredOutcome(e->status, e->endCause))
            continue;
        ++g.scored;
        const double reward = e->reward.value_or(-1.0);
        rewardSum += reward;
        ++g.rewardCounts[static_cast<int>(std::lround(reward))];
        flagged += e->strictFlag;
        if (reward < 1.0)
            continue;
        ++passed;
        if (e->speedupVsEager) {
            vsEager.push_back(*e->speedupVsEager);
            fasterEager += *e->speedupVsEager > 1.0;
            for (double p : kFastP)
                fastEager[p] += *e->speedupVsEager > p;
        }
        if (e->speedupVsCompile) {
            vsCompile.push_back(*e->speedupVsCompile);
            fasterCompile += *e->speedupVsCompile > 1.0;
            for (double p : kFastP)
                fastCompile[p] += *e->speedupVsCompile > p;
        }
    }
    g.passRate = share(passed, g.scored);
    g.fasterThanEagerRate = share(fasterEager, g.scored);
    g.fasterThanCompileRate = share(fasterCompile, g.scored);
    g.geomeanVsEager = geomean(vsEager);
    g.geomeanVsCompile = geomean(vsCompile);
    for (double p : kFastP) {
        g.fastPVsEager[p] = share(fastEager[p], g.scored);
        g.fastPVsCompile[p] = share(fastCompile[p], g.scored);
    }
    g.meanReward = g.scored > 0 ? rewardSum / g.scored : 0.0;
    g.hackFlagRate = share(flagged, g.scored);
    if (g.episodes > 0) {
        g.meanTurns = turnSum / g.episodes;
        g.meanTokens = tokenSum / g.episodes;
        g.meanCostUsd = costSum / g.episodes;
    }
    if (gpuEvaluations > 0)
        g.gpuSecondsPerEvaluation = gpuSum / gpuEvaluations;
    return g;
}

json optionalNumber(const std::optional<double>& value) {
    return value ? json(*value) : json(nullptr);
}

json fastPJson(const std::map<double, double>& shares) {
    json out = json::object();
    for (const auto& [p, value] : shares) {
        char key[16];
        std::snprintf(key, sizeof key, "%.2f", p);
        out[key] = value;
    }
    return out;
}

} // namespace

bool isScoredOutcome(EpisodeStatus status, const std::string& endCause) {
    switch (status) {
    case EpisodeStatus::Finished:
        return true;
    case EpisodeStatus::Stopped:
        return endCause != "user_stop" && endCause != "stopped_in_final_evaluation";
    case EpisodeStatus::Failed:
    case EpisodeStatus::Running:
    case EpisodeStatus::Cancelled:
    case EpisodeStatus::InfrastructureError:
        break;
    }
    return false;
}

bool usesUpARetry(EpisodeStatus status, const std::string& endCause) {
    return status == EpisodeStatus::InfrastructureError && endCause != "abandoned";
}

RolloutEpisode RolloutEpisode::fromRecord(const EpisodeRecord& record, std::optional<int> level) {
    RolloutEpisode e;
    e.status = record.status;
    e.endCause = record.endCause;
    // A rollout's episodes carry their task's level from the task set.
    const int recorded = record.settings.is_object() && record.settings.contains("task_level") &&
                                 record.settings["task_level"].is_number_integer()
                             ? record.settings["task_level"].get<int>()
                             : 0;
    e.level = level.value_or(recorded > 0 ? recorded : levelFromPath(record.task));
    e.reward = record.reward;
    e.turns = record.turns;
    e.tokens = record.usage.inputTokens + record.usage.outputTokens;
    e.costUsd = record.costUsd;
    const json& evaluation = record.finalEvaluation;
    if (!evaluation.is_object())
        return e;
    e.correct = evaluation.value("correct", false);
    const json speedup = evaluation.value("speedup", json::object());
    e.speedupVsEager = positiveNumber(speedup, "vs_eager");
    e.speedupVsCompile = positiveNumber(speedup, "vs_compile");
    for (const json& flag : evaluation.value("flags", json::array()))
        if (flag.is_object() && flag.value("severity", "") == "strict")
            e.strictFlag = true;
    const json environment = evaluation.value("environment", json::object());
    if (environment.is_object() && environment.value("device", "") == "cuda") {
        // Less each stage's waits for its GPU lane (before it began, and for the lane alone when
        // it reached its timed calls): time another evaluation held the GPU.
        double seconds = 0.0;
        for (const json& stage : evaluation.value("stages", json::array()))
            if (stage.is_object() && stage.contains("seconds") && stage["seconds"].is_number() &&
                (stage.value("name", "") == "verify" || stage.value("name", "") == "profile")) {
                const double wait = positiveNumber(stage, "lane_wait_seconds").value_or(0.0) +
                                    positiveNumber(stage, "alone_lane_wait_seconds").value_or(0.0);
                seconds += std::max(0.0, stage["seconds"].get<double>() - wait);
            }
        e.gpuSeconds = seconds;
    }
    return e;
}

RolloutMetrics computeMetrics(const std::vector<RolloutEpisode>& episodes) {
    RolloutMetrics metrics;
    std::vector<const RolloutEpisode*> all;
    std::map<int, std::vector<const RolloutEpisode*>> levels;
    for (const RolloutEpisode& e : episodes) {
        all.push_back(&e);
        levels[e.level].push_back(&e);
    }
    metrics.overall = summarize(all);
    for (const auto& [level, members] : levels)
        metrics.byLevel[level] = summarize(members);
    return metrics;
}

json toJson(const MetricsGroup& g) {
    json rewards = json::object();
    for (const auto& [reward, count] : g.rewardCounts)
        rewards[std::to_string(reward)] = count;
    return {{"episodes", g.episodes},
            {"scored", g.scored},
            {"infrastructure_errors", g.infrastructureErrors},
            {"task_failures", g.taskFailures},
            {"pass_rate", g.passRate},
            {"faster_than_eager_rate", g.fasterThanEagerRate},
            {"faster_than_compile_rate", g.fasterThanCompileRate},
            {"geomean_speedup_vs_eager", optionalNumber(g.geomeanVsEager)},
            {"geomean_speedup_vs_compile", optionalNumber(g.geomeanVsCompile)},
            {"fast_p_vs_eager", fastPJson(g.fastPVsEager)},
            {"fast_p_vs_compile", fastPJson(g.fastPVsCompile)},
            {"mean_reward", g.meanReward},
            {"reward_counts", rewards},
            {"hack_flag_rate", g.hackFlagRate},
            {"mean_turns", g.meanTurns},
            {"mean_tokens", g.meanTokens},
            {"mean_cost_usd", g.meanCostUsd},
            {"gpu_seconds_per_evaluation", optionalNumber(g.gpuSecondsPerEvaluation)}};
}

json toJson(const RolloutMetrics& metrics) {
    json levels = json::object();
    for (const auto& [level, group] : metrics.byLevel)
        levels[std::to_string(level)] = toJson(group);
    return {{"overall", toJson(metrics.overall)}, {"by_level", levels}};
}

RolloutMetrics metricsOfRecords(const std::vector<EpisodeRecord>& episodes) {
    std::vector<RolloutEpisode> summaries;
    summaries.reserve(episodes.size());
    for (const EpisodeRecord& e : episodes)
        summaries.push_back(RolloutEpisode::fromRecord(e));
    return computeMetrics(summaries);
}

} // namespace kwb::agent
