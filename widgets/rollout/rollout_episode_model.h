#pragma once

#include "widgets/models/episode_table_model.h"

namespace kwb::ui {

// A rollout run's episodes as a table, in the order they began (every attempt, retried
// infrastructure failures included). A refreshed snapshot is merged row by row, so the live
// view keeps its selection and scroll position while episodes progress.
class RolloutEpisodeModel : public EpisodeTableModel {
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

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // The status as the table shows it: a failure or a stop with its cause.
    static QString statusText(const agent::EpisodeRecord& episode);

protected:
    // In the order they began: by start time, then id.
    bool above(const agent::EpisodeRecord& a, const agent::EpisodeRecord& b) const override;
};

} // namespace kwb::ui
