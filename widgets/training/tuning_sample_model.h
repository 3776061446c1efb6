#pragma once

#include "engine/tuning/tuning_run_reader.h"

#include <QAbstractTableModel>

namespace kwb::ui {

// A tuning run's scored actions, newest first: which settings the policy (or the random
// baseline) tried, in which phase and step, and what each earned.
class TuningSampleModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        PhaseColumn,
        StepColumn,
        SpaceColumn,
        ActionColumn,
        RewardColumn,
        SpeedupColumn,
        VersusCompileColumn,
        VerdictColumn,
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
    const TuningSampleRow& row(int index) const;

    TuningRunSnapshotPtr snapshot_;
};

} // namespace kwb::ui
