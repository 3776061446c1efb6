#include "widgets/rollout/rollout_episode_model.h"

#include "agent/rollout/rollout_metrics.h"

#include <QFileInfo>
#include <algorithm>

namespace kwb::ui {

namespace {

QString task(const agent::EpisodeRecord& e) {
    // A rollout's episodes name their task by the task set's id ("level1/19_ReLU"); an episode
    // from elsewhere only has its file.
    const std::string id = e.settings.value("run_task", "");
    return id.empty() ? QFileInfo(QString::fromStdString(e.task)).fileName()
                      : QString::fromStdString(id);
}

// A speed-up is only the policy's when its candidate passed: a rejected candidate's timing is
// not a result, so the table shows none rather than a number that reads like one.
std::optional<double> passingSpeedup(const agent::RolloutEpisode& e, bool compile) {
    if (!e.correct || e.strictFlag || !e.reward || *e.reward < 1.0)
        return std::nullopt;
    return compile ? e.speedupVsCompile : e.speedupVsEager;
}

} // namespace

RolloutEpisodeModel::RolloutEpisodeModel(QObject* parent) : EpisodeTableModel(parent) {}

QString RolloutEpisodeModel::statusText(const agent::EpisodeRecord& e) {
    const QString status = QString::fromStdString(std::string(agent::episodeStatusName(e.status)));
    // The cause only where it says more than the status ("cancelled" is its own cause).
    if (e.status == agent::EpisodeStatus::Running || e.status == agent::EpisodeStatus::Finished ||
        e.endCause.empty() || e.endCause == status.toStdString())
        return status;
    return status + QStringLiteral(" (") + QString::fromStdString(e.endCause) + ')';
}

bool RolloutEpisodeModel::above(const agent::EpisodeRecord& a,
                                const agent::EpisodeRecord& b) const {
    return std::tie(a.startedAt, a.id) < std::tie(b.startedAt, b.id);
}

int RolloutEpisodeModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RolloutEpisodeModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const agent::EpisodeRecord& e = rows_[std::size_t(index.row())];
    const agent::RolloutEpisode summary = agent::RolloutEpisode::fromRecord(e);
    const int sample = e.settings.value("run_sample", -1);
    const int attempt = e.settings.value("run_attempt", 0);
    const auto optional = [](std::optional<double> v) { return v ? QVariant(*v) : QVariant(); };
    // The value behind each column, for sorting (numbers as numbers).
    const auto value = [&]() -> QVariant {
        switch (index.column()) {
        case EpisodeColumn:
            return QVariant::fromValue<qint64>(e.id);
        case TaskColumn:
            return task(e);
        case SampleColumn:
            return sample * 100 + attempt;
        case StatusColumn:
            return statusText(e);
        case RewardColumn:
            return optional(e.reward);
        case SpeedupEagerColumn:
            return optional(passingSpeedup(summary, false));
        case SpeedupCompileColumn:
            return optional(passingSpeedup(summary, true));
        case TurnsColumn:
            return e.turns;
        case CostColumn:
            return e.costUsd;
        default:
            return {};
        }
    };
    switch (role) {
    case EpisodeIdRole:
        return QVariant::fromValue<qint64>(e.id);
    case SortRole: {
        const QVariant v = value();
        return v.isValid() ? v : QVariant(-1e300);
    }
    case Qt::TextAlignmentRole:
        return index.column() == TaskColumn || index.column() == StatusColumn
                   ? QVariant()
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole: {
        QString tip = QString::fromStdString(e.task);
        if (summary.strictFlag)
            tip += tr("\nAn integrity check rejected the final evaluation (strict flag).");
        else if (e.reward && !summary.correct)
            tip += tr("\nThe final candidate was not correct: its timing is not a speed-up.");
        if (attempt > 0)
            tip += tr("\nAttempt %1 of this sample (earlier ones ended in infrastructure errors).")
                       .arg(attempt + 1);
        return tip;
    }
    case Qt::DisplayRole:
        switch (index.column()) {
        case SampleColumn:
            return attempt > 0 ? QStringLiteral("%1 (attempt %2)").arg(sample).arg(attempt + 1)
                               : QString::number(sample);
        case RewardColumn:
            return e.reward ? QString::number(*e.reward, 'g', 3) : QStringLiteral("–");
        case SpeedupEagerColumn:
        case SpeedupCompileColumn: {
            const auto s = passingSpeedup(summary, index.column() == SpeedupCompileColumn);
            return s ? QStringLiteral("%1x").arg(*s, 0, 'f', 2) : QStringLiteral("–");
        }
        case CostColumn:
            return QStringLiteral("$%1").arg(e.costUsd, 0, 'f', 4);
        default:
            return value();
        }
    default:
        return {};
    }
}

QVariant RolloutEpisodeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case EpisodeColumn:
        return tr("Episode");
    case TaskColumn:
        return tr("Task");
    case SampleColumn:
        return tr("Sample");
    case StatusColumn:
        return tr("Status");
    case RewardColumn:
        return tr("Reward");
    case SpeedupEagerColumn:
        return tr("vs eager");
    case SpeedupCompileColumn:
        return tr("vs compile");
    case TurnsColumn:
        return tr("Turns");
    case CostColumn:
        return tr("Cost");
    default:
        return {};
    }
}

} // namespace kwb::ui
