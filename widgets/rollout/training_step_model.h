#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <vector>

namespace kwb::ui {

// One step of a training run as `kwb-model train` reports it (a line of the run's steps.jsonl).
struct TrainingStepRow {
    QString phase; // "policy", "value" (the critic's pretraining) or "supervised" (SFT / RFT)
    int step = 0;
    double loss = 0;
    double meanReward = 0;
    double approximateKl = 0;
    double entropy = 0;
    double clipFraction = 0;
    double gradNorm = 0;
    double valueLoss = 0;
    double tokensPerSecond = 0;
    double peakMemoryBytes = 0;
    double seconds = 0;
};

// A step line ({"event": "step", ...}) as a row; nullopt for the run's other lines.
std::optional<TrainingStepRow> trainingStepFromJson(const nlohmann::json& line);

// The steps of one training run, in order, for the Training view's table and curves. Rows are
// only appended while a run goes on; reset() starts the next run's.
class TrainingStepModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        StepColumn,
        PhaseColumn,
        LossColumn,
        RewardColumn,
        KlColumn,
        EntropyColumn,
        ClipColumn,
        GradNormColumn,
        ValueLossColumn,
        TokensPerSecondColumn,
        MemoryColumn,
        ColumnCount
    };

    using QAbstractTableModel::QAbstractTableModel;

    void append(const TrainingStepRow& row);
    void reset();
    const std::vector<TrainingStepRow>& steps() const { return steps_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<TrainingStepRow> steps_;
};

} // namespace kwb::ui
