#pragma once

#include "agent/rollout/episode_training.h"

#include <QString>
#include <QWidget>
#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableView;

namespace kwb::ui {

class RewardPlot;
class TrainingController;
class TrainingStepModel;
struct TrainingStepRow;

// Local training on stored episodes (`kwb train rft|grpo|value|ppo` from the GUI): the settings
// a run needs (algorithm, model, the rollout run, where it goes, the few options people change),
// Start and Stop, and the run as it goes: its steps in a table and as curves (loss and the
// critic's, reward, KL / entropy / clip fraction, tokens per second). The run folder keeps
// everything kwb train writes (config, data, steps, checkpoint, model).
class TrainingView : public QWidget {
    Q_OBJECT
public:
    // `storePath`: the trajectory store whose runs it trains on.
    explicit TrainingView(QString storePath, QWidget* parent = nullptr);

    // The settings the form describes, or why they are not usable yet.
    std::optional<agent::EpisodeTrainingConfig> config(QString* problem) const;
    bool start();

    TrainingController* controller() const { return controller_; }
    TrainingStepModel* steps() const { return steps_; }
    QLabel* statusLabel() const { return status_; }
    QComboBox* algorithmBox() const { return algorithm_; }
    QComboBox* modelBox() const { return model_; }
    QSpinBox* runBox() const { return run_; }
    QLineEdit* outEdit() const { return out_; }
    QSpinBox* stepsBox() const { return stepCount_; }
    QCheckBox* checkpointingBox() const { return checkpointing_; }
    RewardPlot* lossPlot() const { return lossPlot_; }
    RewardPlot* rewardPlot() const { return rewardPlot_; }
    RewardPlot* policyPlot() const { return policyPlot_; }
    RewardPlot* throughputPlot() const { return throughputPlot_; }

private:
    void addStep(const TrainingStepRow& row);
    void redrawCurves();
    void setRunning(bool running);
    QString defaultOutFolder() const;

    QString storePath_;
    TrainingController* controller_;
    TrainingStepModel* steps_;
    QComboBox* algorithm_;
    QComboBox* model_;
    QSpinBox* run_;
    QLineEdit* out_;
    QSpinBox* stepCount_;
    QSpinBox* batchSize_;
    QDoubleSpinBox* learningRate_;
    QComboBox* device_;
    QCheckBox* checkpointing_;
    QPushButton* startButton_;
    QPushButton* stopButton_;
    QLabel* status_;
    QTableView* table_;
    RewardPlot* lossPlot_;
    RewardPlot* rewardPlot_;
    RewardPlot* policyPlot_;
    RewardPlot* throughputPlot_;
};

} // namespace kwb::ui
