#include "widgets/rollout/rollout_metrics_model.h"

namespace kwb::ui {

namespace {

QString percent(double share) {
    return QStringLiteral("%1%").arg(100.0 * share, 0, 'f', 1);
}

QString times(std::optional<double> value) {
    return value ? QStringLiteral("%1x").arg(*value, 0, 'f', 3) : QStringLiteral("–");
}

} // namespace

RolloutMetricsModel::RolloutMetricsModel(QObject* parent) : QAbstractTableModel(parent) {}

void RolloutMetricsModel::setMetrics(const agent::RolloutMetrics& metrics) {
    std::vector<agent::MetricsGroup> groups{metrics.overall};
    std::vector<QString> titles{tr("All")};
    // Only a run over several levels gains a column per level; one level is the "All" column.
    if (metrics.byLevel.size() > 1)
        for (const auto& [level, group] : metrics.byLevel) {
            groups.push_back(group);
            titles.push_back(level == 0 ? tr("No level") : tr("Level %1").arg(level));
        }
    if (titles != titles_) {
        beginResetModel();
        groups_ = std::move(groups);
        titles_ = std::move(titles);
        endResetModel();
        return;
    }
    groups_ = std::move(groups);
    emit dataChanged(index(0, 0), index(RowCount - 1, columnCount() - 1));
}

int RolloutMetricsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || groups_.empty() ? 0 : RowCount;
}

int RolloutMetricsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(groups_.size());
}

QVariant RolloutMetricsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    if (role == Qt::TextAlignmentRole)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    const agent::MetricsGroup& g = groups_[std::size_t(index.column())];
    // Rates over no scored episode say nothing; show that instead of 0%.
    const bool rates = g.scored > 0;
    const auto rate = [&](double share) { return rates ? percent(share) : QStringLiteral("–"); };
    const auto fastP = [&](int i) {
        const auto found = g.fastPVsEager.find(agent::kFastP[i]);
        return rates && found != g.fastPVsEager.end() ? percent(found->second)
                                                      : QStringLiteral("–");
    };
    switch (index.row()) {
    case EpisodesRow:
        return g.episodes;
    case ScoredRow:
        return g.scored;
    case InfrastructureRow:
        return g.infrastructureErrors;
    case TaskFailuresRow:
        return g.taskFailures;
    case PassRateRow:
        return rate(g.passRate);
    case FasterThanEagerRow:
        return rate(g.fasterThanEagerRate);
    case FasterThanCompileRow:
        return rate(g.fasterThanCompileRate);
    case GeomeanEagerRow:
        return times(g.geomeanVsEager);
    case GeomeanCompileRow:
        return times(g.geomeanVsCompile);
    case FastP1Row:
        return fastP(0);
    case FastP105Row:
        return fastP(1);
    case FastP15Row:
        return fastP(2);
    case FastP2Row:
        return fastP(3);
    case MeanRewardRow:
        return rates ? QString::number(g.meanReward, 'f', 2) : QStringLiteral("–");
    case HackFlagRow:
        return rate(g.hackFlagRate);
    case TurnsRow:
        return g.episodes > 0 ? QString::number(g.meanTurns, 'f', 1) : QStringLiteral("–");
    case TokensRow:
        return g.episodes > 0 ? QString::number(g.meanTokens, 'f', 0) : QStringLiteral("–");
    case CostRow:
        return g.episodes > 0 ? QStringLiteral("$%1").arg(g.meanCostUsd, 0, 'f', 4)
                              : QStringLiteral("–");
    case GpuSecondsRow:
        return g.gpuSecondsPerEvaluation
                   ? QStringLiteral("%1 s").arg(*g.gpuSecondsPerEvaluation, 0, 'f', 2)
                   : QStringLiteral("–");
    default:
        return {};
    }
}

QVariant RolloutMetricsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal) {
        if (role == Qt::DisplayRole && section >= 0 && section < int(titles_.size()))
            return titles_[std::size_t(section)];
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case ScoredRow:
            return tr("Ended episodes whose outcome is the policy's: not an infrastructure "
                      "error, not a task that cannot be judged here, not cancelled, not stopped "
                      "by the user. Rates are shares of these.");
        case TaskFailuresRow:
            return tr("Episodes that ended failed: their task cannot be judged on this machine "
                      "(its inputs do not fit, its reference does not import or run). The run "
                      "skips such a task's other samples.");
        case PassRateRow:
            return tr("Reward at least 1: correct, and no integrity check rejected it.");
        case FastP1Row:
        case FastP105Row:
        case FastP15Row:
        case FastP2Row:
            return tr("KernelBench's fast_p: passing and faster than eager by more than p.");
        case GpuSecondsRow:
            return tr("Seconds the final evaluations held a GPU (verify and profile), per "
                      "evaluation; none in CPU mode.");
        default:
            return {};
        }
    }
    if (role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case EpisodesRow:
        return tr("Episodes");
    case ScoredRow:
        return tr("Scored");
    case InfrastructureRow:
        return tr("Infrastructure errors");
    case TaskFailuresRow:
        return tr("Tasks not judgeable here");
    case PassRateRow:
        return tr("Pass rate");
    case FasterThanEagerRow:
        return tr("Faster than eager");
    case FasterThanCompileRow:
        return tr("Faster than compile");
    case GeomeanEagerRow:
        return tr("Geomean vs eager");
    case GeomeanCompileRow:
        return tr("Geomean vs compile");
    case FastP1Row:
        return tr("fast_1.0");
    case FastP105Row:
        return tr("fast_1.05");
    case FastP15Row:
        return tr("fast_1.5");
    case FastP2Row:
        return tr("fast_2.0");
    case MeanRewardRow:
        return tr("Mean reward");
    case HackFlagRow:
        return tr("Hack-flag rate");
    case TurnsRow:
        return tr("Turns per episode");
    case TokensRow:
        return tr("Tokens per episode");
    case CostRow:
        return tr("Cost per episode");
    case GpuSecondsRow:
        return tr("GPU-s per evaluation");
    default:
        return {};
    }
}

} // namespace kwb::ui
