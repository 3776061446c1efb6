#include "widgets/models/run_list_model.h"

#include <QFileInfo>
#include <algorithm>

namespace kwb::ui {

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

int RunListModel::progressOf(const agent::EpisodeRecord& e) {
    if (e.status != agent::EpisodeStatus::Running)
        return -1;
    const int maxTurns = e.settings.value("max_turns", 0);
    if (maxTurns <= 0)
        return 0;
    return std::clamp(100 * e.turns / maxTurns, 0, 100);
}

int RunListModel::rowOf(agent::EpisodeId id) const {
    for (std::size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == id)
            return static_cast<int>(i);
    return -1;
}

void RunListModel::setEpisodes(const std::vector<agent::EpisodeRecord>& episodes) {
    for (int row = rowCount() - 1; row >= 0; --row) {
        const agent::EpisodeId id = rows_[std::size_t(row)].id;
        if (std::none_of(episodes.begin(), episodes.end(),
                         [id](const auto& e) { return e.id == id; })) {
            beginRemoveRows({}, row, row);
            rows_.erase(rows_.begin() + row);
            endRemoveRows();
        }
    }
    for (const auto& episode : episodes)
        upsert(episode);
}

void RunListModel::upsert(const agent::EpisodeRecord& episode) {
    if (const int row = rowOf(episode.id); row >= 0) {
        if (rows_[std::size_t(row)] == episode)
            return;
        rows_[std::size_t(row)] = episode;
        emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
        return;
    }
    // Newest first: by start time, then id, as the store lists them.
    const auto at = std::find_if(rows_.begin(), rows_.end(), [&](const auto& e) {
        return std::tie(e.startedAt, e.id) < std::tie(episode.startedAt, episode.id);
    });
    const int row = static_cast<int>(at - rows_.begin());
    beginInsertRows({}, row, row);
    rows_.insert(at, episode);
    endInsertRows();
}

void RunListModel::remove(agent::EpisodeId id) {
    if (const int row = rowOf(id); row >= 0) {
        beginRemoveRows({}, row, row);
        rows_.erase(rows_.begin() + row);
        endRemoveRows();
    }
}

int RunListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
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
