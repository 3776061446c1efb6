#include "widgets/core/step_files.h"

#include "engine/evaluation/evaluation_result.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <algorithm>
#include <limits>

namespace kwb::ui {
namespace {

QString stringField(const nlohmann::json& payload, const char* key) {
    return payload.contains(key) && payload[key].is_string()
               ? QString::fromStdString(payload[key].get<std::string>())
               : QString();
}

// A relative path that stays inside the folder it is joined to, or empty.
QString safeRelativePath(const QString& path) {
    const QString clean = QDir::cleanPath(path);
    if (clean.isEmpty() || QDir::isAbsolutePath(clean) || clean == QLatin1String("..") ||
        clean.startsWith(QLatin1String("../")))
        return {};
    return clean;
}

QString evaluationLabel(const agent::EpisodeEvent& event) {
    kwb::EvaluationResult result;
    if (!kwb::fromJson(event.payload, result))
        return QObject::tr("step %1: evaluation").arg(event.sequence);
    return QObject::tr("step %1: evaluation, reward %2").arg(event.sequence).arg(result.reward);
}

} // namespace

namespace {

// Folds the FileDiff events `take` accepts, in sequence order, up to `last`.
template <typename Take>
StepFiles foldFiles(const agent::EpisodeSnapshot& episode, qint64 last, Take take) {
    StepFiles out;
    out.step = last;
    for (const auto& event : episode.events) {
        if (event->sequence > last)
            break;
        if (event->kind != agent::EventKind::FileDiff || !take(*event))
            continue;
        const QString path = stringField(event->payload, "path");
        if (path.isEmpty())
            continue;
        if (!event->payload.contains("after")) {
            out.complete = false;
            continue;
        }
        const nlohmann::json& after = event->payload["after"];
        if (after.is_string())
            out.files[path] = QString::fromStdString(after.get<std::string>());
        else
            out.files.erase(path); // null: the step deleted the file
    }
    return out;
}

} // namespace

StepFiles filesAfterStep(const agent::EpisodeSnapshot& episode, qint64 sequence) {
    if (sequence <= 0) // the start: what the episode's first events recorded
        return foldFiles(
            episode, std::numeric_limits<qint64>::max(),
            [](const agent::EpisodeEvent& e) { return e.payload.value("initial", false); });
    return foldFiles(episode, sequence, [](const agent::EpisodeEvent&) { return true; });
}

std::vector<ComparableStep> comparableSteps(const agent::EpisodeSnapshot& episode,
                                            qint64 sequence) {
    std::vector<ComparableStep> out;
    for (const auto& event : episode.events) {
        if (event->sequence >= sequence)
            break;
        if (event->kind == agent::EventKind::Evaluation)
            out.push_back({event->sequence, evaluationLabel(*event)});
    }
    std::reverse(out.begin(), out.end());
    out.push_back({0, QObject::tr("the episode's start")});
    return out;
}

std::pair<QString, QString> joinedDifferences(const StepFiles& before, const StepFiles& after) {
    std::map<QString, std::pair<const QString*, const QString*>> paths;
    for (const auto& [path, text] : before.files)
        paths[path].first = &text;
    for (const auto& [path, text] : after.files)
        paths[path].second = &text;
    QString left, right;
    for (const auto& [path, texts] : paths) {
        const auto [old, now] = texts;
        if (old && now && *old == *now)
            continue;
        const QString header = QStringLiteral("=== %1%2\n");
        left += header.arg(path, old ? QString() : QObject::tr(" (not there yet)"));
        right += header.arg(path, now ? QString() : QObject::tr(" (deleted)"));
        auto append = [](QString& side, const QString* text) {
            if (!text)
                return;
            side += *text;
            if (!text->endsWith(QLatin1Char('\n')))
                side += QLatin1Char('\n');
        };
        append(left, old);
        append(right, now);
    }
    return {left, right};
}

bool writeStepFiles(const StepFiles& files, const QString& directory, QString* error) {
    QDir root(directory);
    if (root.exists() && !root.removeRecursively()) {
        if (error)
            *error = QObject::tr("cannot empty %1").arg(directory);
        return false;
    }
    if (!QDir().mkpath(directory)) {
        if (error)
            *error = QObject::tr("cannot create %1").arg(directory);
        return false;
    }
    for (const auto& [path, text] : files.files) {
        const QString relative = safeRelativePath(path);
        if (relative.isEmpty())
            continue; // recorded by a broken or hostile store: never written outside the folder
        const QString target = root.filePath(relative);
        QDir().mkpath(QFileInfo(target).absolutePath());
        QSaveFile file(target);
        if (!file.open(QIODevice::WriteOnly) || file.write(text.toUtf8()) < 0 || !file.commit()) {
            if (error)
                *error = QObject::tr("cannot write %1: %2").arg(target, file.errorString());
            return false;
        }
    }
    return true;
}

} // namespace kwb::ui
