// The current context of the main window: which task, workspace or episode the panes follow,
// and following a live agent as it edits and evaluates.
#include "agent/store/edit_history.h"
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/core/agent_session_controller.h"
#include "widgets/core/selection_hub.h"
#include "widgets/core/step_files.h"
#include "widgets/core/step_inspection.h"
#include "widgets/editors/candidate_editors.h"
#include "widgets/editors/code_editor.h"
#include "widgets/result/result_panel.h"
#include "widgets/runs/rewards_pane.h"
#include "widgets/window/edit_loop_controller.h"
#include "widgets/window/main_window.h"
#include "widgets/window/system_status_bar.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QSignalBlocker>

namespace kwb::ui {
namespace {

using Kind = WorkbenchContext::Kind;

bool isEditHistory(const agent::EpisodeSnapshot& episode) {
    return episode.record.provider == agent::kEditHistoryProvider;
}

// The n-th evaluation of the episode at or before `step` (1-based; 0 when none).
int evaluationNumber(const agent::EpisodeSnapshot& episode, qint64 step) {
    int number = 0;
    for (const auto& event : episode.events) {
        if (event->sequence > step)
            break;
        if (event->kind == agent::EventKind::Evaluation)
            ++number;
    }
    return number;
}

} // namespace

const WorkbenchContext& MainWindow::context() const {
    return hub_->context();
}

QString MainWindow::contextText() const {
    return contextLabel_->text();
}

void MainWindow::connectContext() {
    contextLabel_ = new QLabel(this);
    contextLabel_->setObjectName(QStringLiteral("contextLabel"));
    contextLabel_->setToolTip(tr("What the panes show: the reference, the editors, the result "
                                 "panel and the rewards plot follow this context"));
    statusBar_->addPermanentWidget(contextLabel_);
    connect(hub_, &SelectionHub::contextChanged, this, &MainWindow::onContextChanged);
    onContextChanged(hub_->context());

    // The window decides what the rewards pane shows: the context's episode or history, not
    // whatever the agent pane received last.
    disconnect(agentPanes_->agentPane(), &AgentPane::episodeShown, agentPanes_->rewardsPane(),
               &RewardsPane::showEpisode);
    connect(agentPanes_->agentPane(), &AgentPane::episodeShown, this, &MainWindow::onEpisodeShown);
    AgentSessionController* controller = agentPanes_->controller();
    connect(controller, &AgentSessionController::sessionStarted, this, [this] {
        adoptLiveEpisode_ = true;
        followedFiles_ = followedEvaluation_ = 0;
    });
    connect(controller, &AgentSessionController::sessionFinished, this, [this] {
        WorkbenchContext now = hub_->context();
        if (now.kind == Kind::Episode && now.live) {
            now.live = now.following = false;
            hub_->setContext(now);
        }
    });
    connect(editLoop_, &EditLoopController::historyChanged, this, &MainWindow::onEditHistory);
}

void MainWindow::onContextChanged(const WorkbenchContext& context) {
    contextLabel_->setText(context.describe());
    {
        const QSignalBlocker quiet(followAgent_);
        followAgent_->setChecked(context.following);
    }
    followAgent_->setEnabled(context.live);
    if (context.kind == Kind::Workspace)
        onEditHistory(editLoop_->history());
    else if (context.kind == Kind::Task)
        agentPanes_->rewardsPane()->clear();
}

void MainWindow::onEpisodeShown(const agent::EpisodeSnapshotPtr& episode) {
    if (!episode)
        return;
    const bool live = agentPanes_->agentPane()->mode() == AgentPane::Mode::Live;
    const WorkbenchContext& now = hub_->context();
    const qint64 id = episode->record.id;
    const bool current = now.kind == Kind::Episode && now.episodeId == id;
    // A live step of an episode the user left: the agent pane and the runs browser show it,
    // the rest of the workbench stays where the user is.
    if (live && !current && !adoptLiveEpisode_)
        return;
    if (!current) {
        WorkbenchContext context =
            WorkbenchContext::episode(id, QString::fromStdString(episode->record.task), live);
        const bool sameSession =
            live && now.kind == Kind::Episode && now.live && now.episodeId == 0;
        if (sameSession)
            context.following = now.following; // its id arrived: the same episode
        else
            followedFiles_ = followedEvaluation_ = 0;
        // A started session may be seen before the store numbered it; adopt until it has.
        if (id != 0)
            adoptLiveEpisode_ = false;
        hub_->setContext(context);
        showEpisodeTask(episode->record);
    }
    agentPanes_->rewardsPane()->showEpisode(episode);
    if (hub_->context().following)
        followLatest(episode);
}

void MainWindow::followLatest(const agent::EpisodeSnapshotPtr& episode) {
    qint64 lastFiles = 0;
    qint64 lastEvaluation = 0;
    for (const auto& event : episode->events) {
        if (event->kind == agent::EventKind::FileDiff)
            lastFiles = event->sequence;
        else if (event->kind == agent::EventKind::Evaluation)
            lastEvaluation = event->sequence;
    }
    if (lastFiles > followedFiles_) {
        // Keep the user's tab and scroll position while the files under it change.
        const QString file = candidates_->currentFile();
        CodeEditor* before = candidates_->editorForFile(file);
        const int top = before ? before->firstVisibleLine() : 0;
        const bool shown = showStepFiles(
            episode, lastFiles,
            tr("Following the agent: episode %1 after step %2 (live, read-only). Selecting a "
               "step stops following; View > Follow the Agent picks it up again.")
                .arg(episode->record.id)
                .arg(lastFiles));
        if (!shown && candidates_->hasUnsavedChanges())
            statusBar()->showMessage(
                tr("Not following the agent's files while %1 has unsaved changes: save or revert "
                   "them, and the next step shows")
                    .arg(candidates_->unsavedFiles().join(QStringLiteral(", "))),
                8000);
        if (shown) {
            followedFiles_ = lastFiles;
            if (CodeEditor* after = candidates_->editorForFile(file)) {
                candidates_->selectFile(file);
                after->setFirstVisibleLine(top);
            }
        }
    }
    if (lastEvaluation > followedEvaluation_) {
        followedEvaluation_ = lastEvaluation;
        const StepInspection inspection = inspectStep(*episode, lastEvaluation);
        if (inspection.evaluation) {
            resultPanel_->showEvaluation(
                inspection.evaluation, inspection.previousEvaluation,
                tr("Episode %1, step %2 (live)").arg(episode->record.id).arg(lastEvaluation));
            const QString records =
                QString::fromStdString(inspection.evaluation->timelineRecordPath);
            if (!records.isEmpty()) {
                requestedTimelineTitle_ =
                    tr("Episode %1, step %2 (live)").arg(episode->record.id).arg(lastEvaluation);
                bridge_.requestTimeline(records);
            }
        }
    }
}

void MainWindow::showEpisodeTask(const agent::EpisodeRecord& record) {
    const QString task = QString::fromStdString(record.task);
    QFile file(task);
    if (!task.isEmpty() && QFileInfo(task).isFile() &&
        file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        reference_->setSource(QString::fromUtf8(file.readAll()));
        referenceDock_->setWindowTitle(tr("Reference — %1 (episode %2's task)")
                                           .arg(QFileInfo(task).fileName())
                                           .arg(record.id));
        return;
    }
    reference_->setSource(
        tr("# Episode %1 ran on the task %2, which is not a file on this machine.\n# Its steps, "
           "files and rewards are in the other panes.\n")
            .arg(record.id)
            .arg(task.isEmpty() ? tr("(none recorded)") : task));
    referenceDock_->setWindowTitle(tr("Reference — episode %1's task (not here)").arg(record.id));
}

void MainWindow::onEditHistory(const agent::EpisodeSnapshotPtr& history) {
    const WorkbenchContext& now = hub_->context();
    if (now.kind != Kind::Workspace || editLoop_->workspace() != now.workspace)
        return;
    if (history)
        agentPanes_->rewardsPane()->showEpisode(history);
    else
        agentPanes_->rewardsPane()->clear();
}

agent::EpisodeSnapshotPtr MainWindow::episodeById(qint64 id) const {
    if (id == agent::kEditHistoryEpisodeId)
        return editLoop_->history();
    const agent::EpisodeSnapshotPtr shown = agentPanes_->agentPane()->shownEpisode();
    return shown && shown->record.id == id ? shown : nullptr;
}

QString MainWindow::stepTitle(const agent::EpisodeSnapshot& episode, qint64 step) const {
    if (isEditHistory(episode))
        return tr("Workspace %1, hand-edit evaluation %2")
            .arg(QFileInfo(currentWorkspace_).fileName())
            .arg(evaluationNumber(episode, step));
    return tr("Episode %1, step %2").arg(episode.record.id).arg(step);
}

} // namespace kwb::ui
