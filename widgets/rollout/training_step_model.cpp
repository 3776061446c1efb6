#include "widgets/rollout/training_step_model.h"

#include <nlohmann/json.hpp>

namespace kwb::ui {

std::optional<TrainingStepRow> trainingStepFromJson(const nlohmann::json& line) {
    if (!line.is_object() || line.value("event", "") != "step")
        return std::nullopt;
    const auto number = [&line](const char* key) {
        return line.contains(key) && line[key].is_number() ? line[key].get<double>() : 0.0;
    };
    TrainingStepRow row;
    row.phase = QString::fromStdString(line.value("phase", std::string("policy")));
    row.step = int(number("step"));
    row.loss = number("loss");
    row.meanReward = number("mean_reward");
    row.approximateKl = number("approximate_kl");
    row.entropy = number("entropy");
    row.clipFraction = number("clip_fraction");
    row.gradNorm = number("grad_norm");
    row.valueLoss = number("value_loss");
    row.tokensPerSecond = number("tokens_per_second");
    row.peakMemoryBytes = number("peak_memory_bytes");
    row.seconds = number("seconds");
    return row;
}

void TrainingStepModel::append(const TrainingStepRow& row) {
    const int at = int(steps_.size());
    beginInsertRows({}, at, at);
    steps_.push_back(row);
    endInsertRows();
}

void TrainingStepModel::reset() {
    beginResetModel();
    steps_.clear();
    endResetModel();
}

int TrainingStepModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(steps_.size());
}

int TrainingStepModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TrainingStepModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= int(steps_.size()))
        return {};
    const TrainingStepRow& r = steps_[std::size_t(index.row())];
    if (role == Qt::TextAlignmentRole)
        return index.column() == PhaseColumn ? QVariant()
                                             : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    // Value pretraining reads rewards but reports none of its own; supervised steps have no
    // reward, ratio or clip at all.
    const bool value = r.phase == QLatin1String("value") || r.phase == QLatin1String("supervised");
    const bool critic = r.phase == QLatin1String("value");
    switch (index.column()) {
    case StepColumn:
        return r.step;
    case PhaseColumn:
        return r.phase;
    case LossColumn:
        return QString::number(r.loss, 'f', 4);
    case RewardColumn:
        return value ? QVariant() : QVariant(QString::number(r.meanReward, 'f', 3));
    case KlColumn:
        return value ? QVariant() : QVariant(QString::number(r.approximateKl, 'g', 3));
    case EntropyColumn:
        return critic ? QVariant() : QVariant(QString::number(r.entropy, 'f', 3));
    case ClipColumn:
        return value ? QVariant() : QVariant(QString::number(r.clipFraction, 'f', 3));
    case GradNormColumn:
        return QString::number(r.gradNorm, 'f', 3);
    case ValueLossColumn:
        return QString::number(r.valueLoss, 'f', 4);
    case TokensPerSecondColumn:
        return QString::number(r.tokensPerSecond, 'f', 0);
    case MemoryColumn:
        return QStringLiteral("%1 MiB").arg(r.peakMemoryBytes / double(1 << 20), 0, 'f', 0);
    default:
        return {};
    }
}

QVariant TrainingStepModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case StepColumn:
        return tr("Step");
    case PhaseColumn:
        return tr("Phase");
    case LossColumn:
        return tr("Loss");
    case RewardColumn:
        return tr("Reward");
    case KlColumn:
        return tr("KL");
    case EntropyColumn:
        return tr("Entropy");
    case ClipColumn:
        return tr("Clip");
    case GradNormColumn:
        return tr("Grad norm");
    case ValueLossColumn:
        return tr("Value loss");
    case TokensPerSecondColumn:
        return tr("Tokens/s");
    case MemoryColumn:
        return tr("Peak memory");
    default:
        return {};
    }
}

} // namespace kwb::ui
