#pragma once

#include "agent/rollout/run_snapshot.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>
#include <functional>

class QWidget;

namespace kwb::ui {

class AgentPanes;
class EngineBridge;
class RolloutController;
class RolloutEpisodeModel;
class RolloutMetricsModel;
class RolloutsView;

// The Rollouts view and what drives it: a RolloutController that runs rollouts in this process,
// the store's runs read through the engine bridge, and the selected run's snapshot re-read
// while it changes (after every settled episode, and every second while the view is visible
// and a run is executing, so running episodes' turns move). Opening an episode hands it to the
// agent panes, which show it in the existing views.
class RolloutPanes : public QObject {
    Q_OBJECT
public:
    // `python`: the task Python the settings name at launch time (empty: auto-detect).
    RolloutPanes(EngineBridge& bridge, AgentPanes& agentPanes, std::function<QString()> python,
                 QWidget* parentWidget);
    ~RolloutPanes() override;

    RolloutsView* view() const;
    RolloutController* controller() const { return controller_; }

    void refreshRuns();
    // The run list has been read and, when it holds a run, the selected run shown (for
    // --screenshot, which must not grab a view still loading).
    bool hasShownRuns() const;
    // Opens the New Rollout dialog; `taskSet` prefills it.
    void launchFromDialog(const QString& taskSet = {});

signals:
    void logMessage(const QString& text, bool problem);

private:
    void requestSelectedRun();
    void updateExecution();

    EngineBridge& bridge_;
    AgentPanes& agentPanes_;
    std::function<QString()> python_;
    RolloutController* controller_;
    RolloutEpisodeModel* episodes_;
    RolloutMetricsModel* metrics_;
    QPointer<RolloutsView> view_; // the window may delete its dock, and the view, first
    QTimer livePoll_;
    // A run this process just opened: selected once the re-read list holds it.
    qint64 follow_ = 0;
    bool listed_ = false;
    qint64 shown_ = 0; // the run whose snapshot the view shows
};

} // namespace kwb::ui
