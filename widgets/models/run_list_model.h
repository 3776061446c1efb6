#pragma once

#include "agent/store/episode_record.h"

#include <QAbstractTableModel>
#include <vector>

namespace kwb::ui {

// The store's episodes as a table, newest first, a rollout's among them (the Rollouts view
// lists runs). Live changes arrive one
// record at a time (upsert) and a refreshed listing is merged row by row, so selections and
// scroll positions survive both.
class RunListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        TaskColumn,
        ModelColumn,
        StatusColumn,
        RewardColumn,
        TurnsColumn,
        ProgressColumn,
        StartedColumn,
        ColumnCount
    };
    enum Role {
        EpisodeIdRole = Qt::UserRole + 1,
        ProgressRole, // 0..100 for a running episode (turns of max turns), else -1
        RunningRole,
        SearchTextRole, // everything a search matches, in one string
    };

    explicit RunListModel(QObject* parent = nullptr);

    void setEpisodes(const std::vector<agent::EpisodeRecord>& episodes);
    void upsert(const agent::EpisodeRecord& episode);
    void remove(agent::EpisodeId id);

    int rowOf(agent::EpisodeId id) const;
    const agent::EpisodeRecord& episodeAt(int row) const { return rows_.at(std::size_t(row)); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Turns of max turns, 0..100; -1 when the episode is not running.
    static int progressOf(const agent::EpisodeRecord& episode);

private:
    std::vector<agent::EpisodeRecord> rows_;
};

} // namespace kwb::ui
