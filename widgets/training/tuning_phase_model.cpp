#include "widgets/training/tuning_phase_model.h"

#include <algorithm>

namespace kwb::ui {

namespace {

// The order a run takes them in: before training, the baseline, after.
int phaseOrder(const std::string& phase) {
    if (phase == "start")
        return 0;
    if (phase == "random")
        return 1;
    if (phase == "final")
        return 2;
    return 3;
}

QString phaseName(const std::string& phase) {
    if (phase == "start")
        return QObject::tr("before training");
    if (phase == "random")
        return QObject::tr("random choice");
    if (phase == "final")
        return QObject::tr("after training");
    return QString::fromStdString(phase);
}

QString percent(double share) {
    return QStringLiteral("%1 %").arg(share * 100.0, 0, 'f', 0);
}

} // namespace

void TuningPhaseModel::setSnapshot(TuningRunSnapshotPtr snapshot) {
    beginResetModel();
    rows_ = snapshot ? snapshot->phases : std::vector<TuningPhaseFigures>{};
    // Training spaces first, then held-out ones; each space's phases in the run's order.
    std::stable_sort(rows_.begin(), rows_.end(),
                     [](const TuningPhaseFigures& a, const TuningPhaseFigures& b) {
                         if (a.heldOut != b.heldOut)
                             return !a.heldOut;
                         if (a.space != b.space)
                             return a.space < b.space;
                         return phaseOrder(a.phase) < phaseOrder(b.phase);
                     });
    endResetModel();
}

int TuningPhaseModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int TuningPhaseModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TuningPhaseModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const TuningPhaseFigures& row = rows_[static_cast<std::size_t>(index.row())];
    if (role == Qt::TextAlignmentRole && index.column() >= SamplesColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case SpaceColumn:
        return QString::fromStdString(row.space);
    case HeldOutColumn:
        return row.heldOut ? tr("held out") : tr("trained on");
    case PhaseColumn:
        return phaseName(row.phase);
    case SamplesColumn:
        return row.samples;
    case MeanRewardColumn:
        return QString::number(row.meanReward, 'f', 2);
    case PassRateColumn:
        return percent(row.passRate);
    case FasterThanCompileColumn:
        return percent(row.fasterThanCompile);
    case SpeedupColumn:
        return row.speedupVsEager > 0 ? QStringLiteral("%1x").arg(row.speedupVsEager, 0, 'f', 2)
                                      : QStringLiteral("-");
    default:
        return {};
    }
}

QVariant TuningPhaseModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SpaceColumn:
        return tr("Space");
    case HeldOutColumn:
        return tr("Role");
    case PhaseColumn:
        return tr("Phase");
    case SamplesColumn:
        return tr("Samples");
    case MeanRewardColumn:
        return tr("Mean reward");
    case PassRateColumn:
        return tr("Pass rate");
    case FasterThanCompileColumn:
        return tr("Faster than compile");
    case SpeedupColumn:
        return tr("Speed-up vs eager");
    default:
        return {};
    }
}

} // namespace kwb::ui
