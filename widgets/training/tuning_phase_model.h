#pragma once

#include "engine/tuning/tuning_run_reader.h"

#include <QAbstractTableModel>

namespace kwb::ui {

// A tuning run's phases per space, as a table: the policy before training, the random-choice
// baseline, and the policy after training, on the training spaces and the held-out ones. The
// rows are the snapshot's; a new snapshot resets them.
class TuningPhaseModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        SpaceColumn,
        HeldOutColumn,
        PhaseColumn,
        SamplesColumn,
        MeanRewardColumn,
        PassRateColumn,
        FasterThanCompileColumn,
        SpeedupColumn,
        ColumnCount
    };
    using QAbstractTableModel::QAbstractTableModel;

    void setSnapshot(TuningRunSnapshotPtr snapshot);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<TuningPhaseFigures> rows_;
};

} // namespace kwb::ui
