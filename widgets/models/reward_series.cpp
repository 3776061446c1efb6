#include "widgets/models/reward_series.h"

#include "engine/evaluation/evaluation_result.h"

#include <cmath>
#include <map>
#include <regex>

namespace kwb::ui {

std::vector<EvaluationPoint> evaluationPoints(const agent::EpisodeSnapshot& episode) {
    std::vector<EvaluationPoint> points;
    for (const auto& event : episode.events) {
        if (event->kind != agent::EventKind::Evaluation)
            continue;
        kwb::EvaluationResult result;
        if (!kwb::fromJson(event->payload, result))
            continue; // an unreadable record has no values to plot; the conversation shows it
        EvaluationPoint point;
        point.episode = episode.record.id;
        point.sequence = event->sequence;
        point.index = static_cast<int>(points.size()) + 1;
        point.reward = result.reward;
        point.speedupVsEager = result.speedupVsEager;
        point.speedupVsCompile = result.speedupVsCompile;
        point.correct = result.correct;
        point.trigger = event->payload.value("trigger", std::string());
        point.verdict = result.verdict();
        points.push_back(std::move(point));
    }
    return points;
}

RolloutAggregate aggregate(const std::vector<EvaluationPoint>& points, std::string label) {
    RolloutAggregate out;
    out.label = std::move(label);
    out.evaluations = static_cast<int>(points.size());
    if (points.empty())
        return out;
    double rewardSum = 0;
    int passes = 0;
    int faster = 0;
    double logSum = 0;
    int timed = 0;
    for (const EvaluationPoint& p : points) {
        rewardSum += p.reward;
        if (p.reward < 1)
            continue;
        ++passes;
        if (p.speedupVsCompile > 1.0)
            ++faster;
        if (p.speedupVsEager > 0) {
            logSum += std::log(p.speedupVsEager);
            ++timed;
        }
    }
    const double n = static_cast<double>(points.size());
    out.meanReward = rewardSum / n;
    out.passRate = passes / n;
    out.fasterThanCompileRate = faster / n;
    if (timed > 0)
        out.geomeanSpeedupVsEager = std::exp(logSum / timed);
    return out;
}

std::string taskLevel(const agent::EpisodeRecord& record) {
    if (const auto it = record.settings.find("level"); it != record.settings.end()) {
        if (it->is_number_integer())
            return "level " + std::to_string(it->get<int>());
        if (it->is_string())
            return it->get<std::string>();
    }
    static const std::regex folder(R"((?:^|[/\\])level[_ -]?(\d+)(?:[/\\]|$))", std::regex::icase);
    std::smatch match;
    if (std::regex_search(record.task, match, folder))
        return "level " + match[1].str();
    return "unlabelled";
}

RolloutMetrics rolloutMetrics(const std::vector<agent::EpisodeSnapshotPtr>& episodes) {
    RolloutMetrics out;
    std::map<int, std::vector<EvaluationPoint>> byStep;
    std::map<std::string, std::vector<EvaluationPoint>> byLevel;
    for (const auto& episode : episodes) {
        if (!episode)
            continue;
        ++out.episodes;
        const auto points = evaluationPoints(*episode);
        for (const auto& p : points)
            byStep[p.index].push_back(p);
        if (!points.empty())
            byLevel[taskLevel(episode->record)].push_back(points.back());
    }
    for (auto& [step, points] : byStep)
        out.perStep.push_back(aggregate(points, std::to_string(step)));
    for (auto& [level, points] : byLevel)
        out.perLevel.push_back(aggregate(points, level));
    return out;
}

} // namespace kwb::ui
