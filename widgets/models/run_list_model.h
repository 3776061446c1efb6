#pragma once

#include "widgets/models/episode_table_model.h"

namespace kwb::ui {

// The store's episodes as a table, newest first, a rollout's among them (the Rollouts view
// lists runs). Live changes arrive one
// record at a time (upsert) and a refreshed listing is merged row by row, so selections and
// scroll positions survive both.
class RunListModel : public EpisodeTableModel {
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

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Turns of max turns, 0..100; -1 when the episode is not running.
    static int progressOf(const agent::EpisodeRecord& episode);

protected:
    // Newest first: by start time, then id, as the store lists them.
    bool above(const agent::EpisodeRecord& a, const agent::EpisodeRecord& b) const override;
};

} // namespace kwb::ui
