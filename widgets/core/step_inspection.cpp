#include "widgets/core/step_inspection.h"

#include <QStringList>

namespace kwb::ui {
namespace {

std::shared_ptr<const kwb::EvaluationResult> evaluationOf(const agent::EpisodeEvent& event) {
    auto result = std::make_shared<kwb::EvaluationResult>();
    if (!kwb::fromJson(event.payload, *result))
        return nullptr;
    return result;
}

QString diffOf(const agent::EpisodeEvent& event) {
    const auto& p = event.payload;
    const QString path = QString::fromStdString(
        p.contains("path") && p["path"].is_string() ? p["path"].get<std::string>() : "");
    const QString diff = QString::fromStdString(
        p.contains("diff") && p["diff"].is_string() ? p["diff"].get<std::string>() : "");
    return QStringLiteral("=== step %1: %2\n%3").arg(event.sequence).arg(path, diff);
}

} // namespace

StepInspection inspectStep(const agent::EpisodeSnapshot& episode, qint64 sequence) {
    StepInspection out;
    std::size_t at = episode.events.size();
    for (std::size_t i = 0; i < episode.events.size(); ++i)
        if (episode.events[i]->sequence == sequence)
            at = i;
    if (at == episode.events.size())
        return out;
    out.found = true;
    const agent::EpisodeEvent& step = *episode.events[at];
    if (step.kind == agent::EventKind::FileDiff) {
        out.changes = diffOf(step);
        out.changedFiles = 1;
    }
    if (step.kind == agent::EventKind::Evaluation)
        out.evaluation = evaluationOf(step);

    QStringList diffs;
    for (std::size_t i = at; i-- > 0;) {
        const agent::EpisodeEvent& event = *episode.events[i];
        if (event.kind == agent::EventKind::Evaluation) {
            out.previousEvaluation = evaluationOf(event);
            break;
        }
        if (event.kind == agent::EventKind::FileDiff)
            diffs.prepend(diffOf(event));
    }
    if (step.kind != agent::EventKind::FileDiff) {
        out.changes = diffs.join(QLatin1Char('\n'));
        out.changedFiles = static_cast<int>(diffs.size());
    }
    return out;
}

} // namespace kwb::ui
