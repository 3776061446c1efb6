#pragma once

#include "agent/rollout/rollout_metrics.h"

#include <QAbstractTableModel>
#include <vector>

namespace kwb::ui {

// The paper's metrics of a run (agent::computeMetrics) as a table: one row per metric, one
// column for the whole run and one per KernelBench level, so levels compare side by side.
// Rates show as percentages, speed-ups as "1.23x"; a metric with no episode to speak for it
// shows "–" rather than a zero that reads like a result.
class RolloutMetricsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Row {
        EpisodesRow,
        ScoredRow,
        InfrastructureRow,
        TaskFailuresRow, // failed: the task cannot be judged on this machine
        PassRateRow,
        FasterThanEagerRow,
        FasterThanCompileRow,
        GeomeanEagerRow,
        GeomeanCompileRow,
        FastP1Row, // fast_p over eager for p in agent::kFastP, in order
        FastP105Row,
        FastP15Row,
        FastP2Row,
        MeanRewardRow,
        HackFlagRow,
        TurnsRow,
        TokensRow,
        CostRow,
        GpuSecondsRow,
        RowCount
    };

    explicit RolloutMetricsModel(QObject* parent = nullptr);

    void setMetrics(const agent::RolloutMetrics& metrics);
    // The groups in column order: the whole run, then each level.
    const std::vector<agent::MetricsGroup>& groups() const { return groups_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<agent::MetricsGroup> groups_;
    std::vector<QString> titles_;
};

} // namespace kwb::ui
