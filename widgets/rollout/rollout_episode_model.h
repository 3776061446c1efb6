#pragma once

#include "agent/store/episode_record.h"

#include <QAbstractTableModel>
#include <vector>

namespace kwb::ui {

// A rollout run's episodes as a table, in the order they began (every attempt, retried
// infrastructure failures included). A refreshed snapshot is merged row by row, so the live
// view keeps its selection and scroll position while episodes progress.
class RolloutEpisodeModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        EpisodeColumn,
        TaskColumn,
        SampleColumn,
        StatusColumn,
        RewardColumn,
        SpeedupEagerColumn,
        SpeedupCompileColumn,
        TurnsColumn,
        CostColumn,
        ColumnCount
    };
    enum Role {
        EpisodeIdRole = Qt::UserRole + 1,
        SortRole, // numbers sort as numbers; a missing value sorts first
    };

    explicit RolloutEpisodeModel(QObject* parent = nullptr);

    void setEpisodes(const std::vector<agent::EpisodeRecord>& episodes);
    void clear();
    int rowOf(agent::EpisodeId id) const;
    const agent::EpisodeRecord& episodeAt(int row) const { return rows_.at(std::size_t(row)); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // The status as the table shows it: a failure or a stop with its cause.
    static QString statusText(const agent::EpisodeRecord& episode);

private:
    std::vector<agent::EpisodeRecord> rows_;
};

} // namespace kwb::ui
