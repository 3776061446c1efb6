#include "widgets/training/tuning_sample_model.h"

namespace kwb::ui {

namespace {

QString speedup(const TuningSampleRow& sample, double value) {
    return sample.correct && value > 0 ? QStringLiteral("%1x").arg(value, 0, 'f', 2)
                                       : QStringLiteral("-");
}

} // namespace

void TuningSampleModel::setSnapshot(TuningRunSnapshotPtr snapshot) {
    beginResetModel();
    snapshot_ = std::move(snapshot);
    endResetModel();
}

const TuningSampleRow& TuningSampleModel::row(int index) const {
    // Newest first: the table's top row is the last sample the run scored.
    return snapshot_->samples[snapshot_->samples.size() - 1 - static_cast<std::size_t>(index)];
}

int TuningSampleModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !snapshot_ ? 0 : static_cast<int>(snapshot_->samples.size());
}

int TuningSampleModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TuningSampleModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const TuningSampleRow& sample = row(index.row());
    if (role == Qt::TextAlignmentRole &&
        (index.column() == StepColumn || index.column() == RewardColumn ||
         index.column() == SpeedupColumn || index.column() == VersusCompileColumn))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case PhaseColumn:
        return QString::fromStdString(sample.phase);
    case StepColumn:
        return sample.step;
    case SpaceColumn:
        return QString::fromStdString(sample.space);
    case ActionColumn:
        return QString::fromStdString(sample.action);
    case RewardColumn:
        return sample.measured ? QVariant(sample.reward) : QVariant(tr("none"));
    case SpeedupColumn:
        return speedup(sample, sample.speedupVsEager);
    case VersusCompileColumn:
        return speedup(sample, sample.speedupVsCompile);
    case VerdictColumn:
        return QString::fromStdString(sample.verdict);
    default:
        return {};
    }
}

QVariant TuningSampleModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case PhaseColumn:
        return tr("Phase");
    case StepColumn:
        return tr("Step");
    case SpaceColumn:
        return tr("Space");
    case ActionColumn:
        return tr("Settings");
    case RewardColumn:
        return tr("Reward");
    case SpeedupColumn:
        return tr("vs eager");
    case VersusCompileColumn:
        return tr("vs compile");
    case VerdictColumn:
        return tr("Verdict");
    default:
        return {};
    }
}

} // namespace kwb::ui
