#include "widgets/models/run_list_model.h"

#include <QFileInfo>
#include <algorithm>

namespace kwb::ui {

RunListModel::RunListModel(QObject* parent) : EpisodeTableModel(parent) {}

int RunListModel::progressOf(const agent::EpisodeRecord& e) {
    if (e.status != agent::EpisodeStatus::Running)
        return -1;
    const int maxTurns = e.settings.value("max_turns", 0);
    if (maxTurns <= 0)
        return 0;
    return std::clamp(100 * e.turns / maxTurns, 0, 100);
}

bool RunListModel::above(const agent::EpisodeRecord& a, const agent::EpisodeRecord& b) const {
    return std::tie(b.startedAt, b.id) < std::tie(a.startedAt, a.id);
}

int RunListModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const agent::EpisodeRecord& e = rows_[std::size_t(index.row())];
    const QString status = QString::fromStdString(std::string(agent::episodeStatusName(e.status)));
    const QString task = QFileInfo(QString::fromStdString(e.task)).fileName();
    switch (role) {
    case EpisodeIdRole:
        return QVariant::fromValue<qint64>(e.id);
    case ProgressRole:
        return progressOf(e);
    case RunningRole:
        return e.status == agent::EpisodeStatus::Running;
    case SearchTextRole:
        return QStringLiteral("%1 %2 %3 %4 %5")
            .arg(e.id)
            .arg(QString::fromStdString(e.task), QString::fromStdString(e.model), status,
                 QString::fromStdString(e.provider));
    case Qt::ToolTipRole:
        return QStringLiteral("%1\n%2 · %3")
            .arg(QString::fromStdString(e.task), QString::fromStdString(e.provider),
                 QString::fromStdString(e.model));
    case Qt::TextAlignmentRole:
        return index.column() == IdColumn || index.column() == RewardColumn ||
                       index.column() == TurnsColumn
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant();
    case Qt::DisplayRole:
        switch (index.column()) {
        case IdColumn:
            return QVariant::fromValue<qint64>(e.id);
        case TaskColumn:
            return task;
        case ModelColumn:
            return QString::fromStdString(e.model);
        case StatusColumn:
            return status;
        case RewardColumn:
            return e.reward ? QVariant(*e.reward) : QVariant(QStringLiteral("–"));
        case TurnsColumn:
            return e.turns;
        case ProgressColumn: {
            const int progress = progressOf(e);
            return progress < 0 ? QString() : QStringLiteral("%1%").arg(progress);
        }
        case StartedColumn:
            return QString::fromStdString(e.startedAt)
                .left(19)
                .replace(QLatin1Char('T'), QLatin1Char(' '));
        default:
            return {};
        }
    default:
        return {};
    }
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IdColumn:
        return tr("Episode");
    case TaskColumn:
        return tr("Task");
    case ModelColumn:
        return tr("Model");
    case StatusColumn:
        return tr("Status");
    case RewardColumn:
        return tr("Reward");
    case TurnsColumn:
        return tr("Turns");
    case ProgressColumn:
        return tr("Progress");
    case StartedColumn:
        return tr("Started (UTC)");
    default:
        return {};
    }
}

} // namespace kwb::ui
