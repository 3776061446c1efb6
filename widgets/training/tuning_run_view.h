#pragma once

#include "engine/tuning/tuning_run_reader.h"

#include <QString>
#include <QTimer>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace kwb::ui {

class EngineBridge;
class RewardHistogram;
class RewardPlot;
class TuningPhaseModel;
class TuningSampleModel;
class TuningRunController;

// Local RL on kernel-tuning spaces (`kwb train tune`) in the workbench: start a run from its
// settings file, stop or resume it, or open the folder of one started anywhere else (the shell,
// a GPU server whose folder was copied back). While the run writes its folder the view reads
// what was appended, once a second: reward per step with the latest step's distribution, pass
// rate and faster-than-torch.compile share, speed-up, the policy update's figures and
// throughput, the phases (before training, random choice, after) per space, and every scored
// action, newest first.
class TuningRunView : public QWidget {
    Q_OBJECT
public:
    TuningRunView(EngineBridge& bridge, QWidget* parent = nullptr);

    // Follows the run in `folder` (read now, then as it grows while it runs or is unfinished).
    void openRun(const QString& folder);
    // Starts a run with the settings file in the config field into the folder field.
    bool start();
    bool resume();
    // Whether runs can start here: a tuning run scores every kernel on a GPU. Without one the
    // view says why and still opens runs made elsewhere.
    void setStartPossible(bool possible, const QString& reason);

    TuningRunSnapshotPtr snapshot() const { return snapshot_; }
    TuningRunController* controller() const { return controller_; }
    TuningPhaseModel* phases() const { return phases_; }
    TuningSampleModel* samples() const { return samples_; }
    QLineEdit* configEdit() const { return config_; }
    QComboBox* modelBox() const { return model_; }
    QLineEdit* folderEdit() const { return folder_; }
    QPushButton* startButton() const { return startButton_; }
    QPushButton* stopButton() const { return stopButton_; }
    QPushButton* resumeButton() const { return resumeButton_; }
    QLabel* statusLabel() const { return status_; }
    RewardPlot* rewardPlot() const { return rewardPlot_; }
    RewardPlot* ratesPlot() const { return ratesPlot_; }
    RewardPlot* speedupPlot() const { return speedupPlot_; }
    RewardPlot* policyPlot() const { return policyPlot_; }
    RewardPlot* throughputPlot() const { return throughputPlot_; }
    RewardHistogram* histogram() const { return histogram_; }

private:
    void show(TuningRunSnapshotPtr snapshot);
    void redrawCurves();
    void updateButtons();
    QString describe(const TuningRunSnapshot& run) const;

    EngineBridge& bridge_;
    TuningRunController* controller_;
    TuningPhaseModel* phases_;
    TuningSampleModel* samples_;
    TuningRunSnapshotPtr snapshot_;
    QString following_; // the folder being read
    QTimer poll_;
    QString lastProcessMessage_;
    bool startPossible_ = true;
    QString startImpossibleReason_;
    QLineEdit* config_;
    QComboBox* model_;
    QLineEdit* folder_;
    QPushButton* startButton_;
    QPushButton* stopButton_;
    QPushButton* resumeButton_;
    QLabel* status_;
    QTableView* phaseTable_;
    QTableView* sampleTable_;
    RewardPlot* rewardPlot_;
    RewardHistogram* histogram_;
    RewardPlot* ratesPlot_;
    RewardPlot* speedupPlot_;
    RewardPlot* policyPlot_;
    RewardPlot* throughputPlot_;
};

} // namespace kwb::ui
