#include "widgets/agent/rollout_panes.h"

#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/rollout/rollout_controller.h"
#include "widgets/rollout/rollout_episode_model.h"
#include "widgets/rollout/rollout_metrics_model.h"
#include "widgets/runs/rollout_launch_dialog.h"
#include "widgets/runs/rollouts_view.h"

namespace kwb::ui {

RolloutPanes::RolloutPanes(EngineBridge& bridge, AgentPanes& agentPanes,
                           std::function<QString()> python, QWidget* parentWidget)
    : QObject(parentWidget), bridge_(bridge), agentPanes_(agentPanes), python_(std::move(python)),
      controller_(new RolloutController(agentPanes.storePath(), this)),
      episodes_(new RolloutEpisodeModel(this)), metrics_(new RolloutMetricsModel(this)),
      view_(new RolloutsView(episodes_, metrics_, parentWidget)) {
    const QString store = agentPanes_.storePath();
    connect(&bridge_, &EngineBridge::runListReady, this,
            [this, store](std::shared_ptr<const agent::RunListSnapshot> list) {
                if (!view_ || QString::fromStdString(list->storePath) != store)
                    return;
                view_->setRuns(list->runs);
                listed_ = true;
                if (follow_ != 0) {
                    view_->selectRun(follow_);
                    if (view_->selectedRun() == follow_)
                        follow_ = 0;
                }
                if (!list->error.empty())
                    emit logMessage(QString::fromStdString(list->error), true);
                else if (list->runs.empty() && !controller_->isRunning())
                    view_->setStatusText(tr("No rollout in %1 yet. New Rollout… starts one; "
                                            "`kwb rollout` runs write here too.")
                                             .arg(store));
            });
    connect(&bridge_, &EngineBridge::runReady, this, [this, store](agent::RunSnapshotPtr run) {
        if (view_ && QString::fromStdString(run->storePath) == store) {
            view_->showRun(*run);
            shown_ = run->run.id;
        }
    });

    connect(view_, &RolloutsView::newRunRequested, this, [this] { launchFromDialog(); });
    connect(view_, &RolloutsView::pauseRequested, controller_, &RolloutController::pause);
    connect(view_, &RolloutsView::continueRequested, controller_, &RolloutController::unpause);
    connect(view_, &RolloutsView::stopRequested, controller_, &RolloutController::stop);
    connect(view_, &RolloutsView::resumeRequested, this,
            [this](qint64 run) { controller_->resumeRun(run); });
    connect(view_, &RolloutsView::runSelected, this, &RolloutPanes::requestSelectedRun);
    connect(view_, &RolloutsView::refreshRequested, this, &RolloutPanes::refreshRuns);
    connect(view_, &RolloutsView::openRequested, &agentPanes_, &AgentPanes::openEpisode);

    connect(controller_, &RolloutController::runOpened, this, [this](qint64 run) {
        // The view follows the run it started; the list may not hold it yet.
        follow_ = run;
        refreshRuns();
        emit logMessage(tr("Rollout run %1 is running").arg(run), false);
    });
    connect(controller_, &RolloutController::progressed, this,
            [this](qint64 run, int done, int planned, int gaveUp) {
                if (!view_)
                    return;
                view_->setStatusText(
                    gaveUp > 0 ? tr("Run %1: %2 of %3 done, %4 given up")
                                     .arg(run)
                                     .arg(done)
                                     .arg(planned)
                                     .arg(gaveUp)
                               : tr("Run %1: %2 of %3 done").arg(run).arg(done).arg(planned));
                updateExecution();
                if (view_->selectedRun() == run)
                    requestSelectedRun();
            });
    connect(controller_, &RolloutController::runEnded, this,
            [this](qint64, const QString&, const QString& message) {
                if (view_)
                    view_->setStatusText(message);
                emit logMessage(message, false);
                refreshRuns(); // the stored status changed
                requestSelectedRun();
            });
    connect(controller_, &RolloutController::runFailed, this, [this](const QString& message) {
        if (view_)
            view_->setStatusText(message);
        emit logMessage(message, true);
    });
    connect(controller_, &RolloutController::runningChanged, this, [this](bool running) {
        updateExecution();
        if (running)
            livePoll_.start();
        else
            livePoll_.stop();
    });
    connect(controller_, &RolloutController::pausedChanged, this, [this](bool paused) {
        updateExecution();
        if (view_ && paused)
            view_->setStatusText(tr("Paused: no new episode starts; running ones pause after "
                                    "their current step."));
    });
    // Running episodes change turn by turn without settling; a cheap poll while visible keeps
    // the table moving (the bridge drops a read superseded by a newer one).
    livePoll_.setInterval(1000);
    connect(&livePoll_, &QTimer::timeout, this, [this] {
        if (view_ && view_->isVisible())
            requestSelectedRun();
    });
    updateExecution();
}

RolloutPanes::~RolloutPanes() {
    delete view_.data();
}

RolloutsView* RolloutPanes::view() const {
    return view_.data();
}

void RolloutPanes::refreshRuns() {
    bridge_.requestRunList(agentPanes_.storePath());
}

bool RolloutPanes::hasShownRuns() const {
    return listed_ && view_ && (view_->selectedRun() == 0 || view_->selectedRun() == shown_);
}

void RolloutPanes::requestSelectedRun() {
    if (view_ && view_->selectedRun() != 0)
        bridge_.requestRun(agentPanes_.storePath(), view_->selectedRun());
}

void RolloutPanes::updateExecution() {
    if (view_)
        view_->setExecution(controller_->isRunning(), controller_->isPaused());
}

void RolloutPanes::launchFromDialog(const QString& taskSet) {
    if (controller_->isRunning())
        return;
    const agent::ProviderSettings provider =
        agentPanes_.agentPane()
            ? agentPanes_.agentPane()->startRequest().provider
            : agent::ProviderSettings::defaultsFor(agent::ProviderKind::OpenAiChat);
    RolloutLaunchDialog dialog(provider, python_ ? python_() : QString(), view_);
    if (!taskSet.isEmpty())
        dialog.setTaskSet(taskSet);
    if (dialog.exec() != QDialog::Accepted || !dialog.problem().isEmpty())
        return;
    if (controller_->start(dialog.config()) && view_)
        view_->setStatusText(tr("Starting the rollout (reading the task set)…"));
}

} // namespace kwb::ui
