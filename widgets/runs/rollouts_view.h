#pragma once

#include "agent/rollout/run_snapshot.h"

#include <QWidget>
#include <map>

class QComboBox;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QTreeView;

namespace kwb::ui {

class RewardHistogram;
class RolloutEpisodeModel;
class RolloutMetricsModel;

// The Rollouts view: pick a run of the store, watch its metrics by level, its reward
// distribution and its episodes live, and start, pause, continue, stop or resume runs. Like the
// runs browser it only emits requests; its owner runs rollouts (RolloutController) and reads
// the store (EngineBridge) off the UI thread, then hands back immutable snapshots.
class RolloutsView : public QWidget {
    Q_OBJECT
public:
    RolloutsView(RolloutEpisodeModel* episodes, RolloutMetricsModel* metrics,
                 QWidget* parent = nullptr);

    // The store's runs, newest first; the selection stays on the same run where it can.
    void setRuns(const std::vector<agent::RunRecord>& runs);
    qint64 selectedRun() const;
    void selectRun(qint64 run);
    // The selected run as read from the store: metrics, distribution, episodes and status.
    void showRun(const agent::RunSnapshot& snapshot);
    // Whether this process is executing a rollout and has paused it, for the buttons.
    void setExecution(bool running, bool paused);
    void setStatusText(const QString& text);

    QComboBox* runBox() const { return runs_; }
    QTreeView* episodeView() const { return episodes_; }
    QTableView* metricsView() const { return metrics_; }
    RewardHistogram* histogram() const { return histogram_; }
    QPushButton* newButton() const { return new_; }
    QPushButton* pauseButton() const { return pause_; }
    QPushButton* stopButton() const { return stop_; }
    QPushButton* resumeButton() const { return resume_; }
    QPushButton* openButton() const { return open_; }
    QLabel* statusLabel() const { return status_; }

signals:
    void newRunRequested();
    void pauseRequested();
    void continueRequested();
    void stopRequested();
    void resumeRequested(qint64 run);
    void runSelected(qint64 run);
    void openRequested(qint64 episodeId);
    void refreshRequested();

private:
    qint64 selectedEpisode() const;
    void updateButtons();

    RolloutEpisodeModel* episodeModel_;
    QSortFilterProxyModel* proxy_;
    QComboBox* runs_;
    QLabel* summary_;
    QTableView* metrics_;
    RewardHistogram* histogram_;
    QTreeView* episodes_;
    QLabel* status_;
    QPushButton* new_;
    QPushButton* pause_;
    QPushButton* stop_;
    QPushButton* resume_;
    QPushButton* open_;
    QPushButton* refresh_;
    bool running_ = false;
    bool paused_ = false;
    std::map<qint64, std::string> statuses_; // each listed run's stored status
};

} // namespace kwb::ui
