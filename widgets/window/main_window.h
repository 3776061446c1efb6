#pragma once

#include "agent/store/episode_snapshot.h"
#include "engine/system/system_report.h"
#include "widgets/core/app_settings.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/core/workbench_context.h"
#include "widgets/window/new_workspace_dialog.h"

#include <QMainWindow>
#include <QTemporaryDir>
#include <memory>

class QAction;
class QDialog;
class QDockWidget;
class QLabel;

namespace kwb::ui {

class AgentPanes;
class RolloutPanes;
class TrainingView;
class TuningRunView;
class CandidateDiagnostics;
class CandidateEditors;
class CodeEditor;
class EditLoopController;
class LogPane;
class ResultPanel;
class SelectionHub;
class SystemStatusBar;
class TaskBrowser;
class TaskListModel;
class TimelinePane;
class TraceOpener;
class WelcomeDialog;
class CountersPane;

// The workbench window: dockable panes around the candidate editors. It owns no engine state;
// everything it shows arrives as snapshots from the EngineBridge.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(AppSettings& settings, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a task file. Returns false (and logs why) when it cannot be read.
    bool openTask(const QString& path);
    // Opens a workspace folder (model.py + model_new.py): the reference shows its model.py, the
    // candidate editors its model_new.py and kernels/, editable; Ctrl+S saves (and verifies).
    bool openWorkspace(const QString& directory);
    // Creates a workspace (File > New Workspace from Task) and opens it; false, with the reason
    // in the log, when it cannot be made.
    bool createWorkspace(const NewWorkspaceDialog::Choice& choice);
    // Opens a trace file in the timeline dock (loads on the engine thread; TraceOpener).
    void openTrace(const QString& path);
    // Opens whatever `path` holds (agent/store/opened_file): a task, a workspace folder, a trace,
    // or exported episodes (read without importing; the first is shown for replay). The command
    // line's FILE, a drop on the window, File > Open File… and a file manager's Open With all
    // come here. False, with the reason in the log and the status bar, for anything else.
    bool openFile(const QString& path);
    TraceOpener* traceOpener() const { return traceOpener_; }
    // Opens Nsight Compute CSV files (details, and raw for the roofline) in the Counters dock.
    void openCounters(const QStringList& paths);
    CountersPane* countersPane() const { return countersPane_; }
    void refreshSystemReport();
    // The welcome page (first start, Help > Welcome): the machine, a task, a model for agents.
    void showWelcome();
    WelcomeDialog* welcomeDialog() const { return welcome_; }
    // The size of a first start (no saved layout): 1600x1000 where the screen has room.
    QSize defaultWindowSize() const;
    void saveLayout();
    void resetLayout();

    // For tests and --screenshot.
    QString currentTaskPath() const { return currentTaskPath_; }
    bool hasSystemReport() const { return systemReport_ != nullptr; }
    const kwb::SystemReport* systemReport() const { return systemReport_.get(); }
    bool hasTaskList() const { return taskListLoaded_; }
    CodeEditor* referenceEditor() const { return reference_; }
    CandidateEditors* candidateEditors() const { return candidates_; }
    SystemStatusBar* systemStatusBar() const { return statusBar_; }
    TaskListModel* taskListModel() const { return taskModel_; }
    AgentPanes* agentPanes() const { return agentPanes_; }
    RolloutPanes* rolloutPanes() const { return rolloutPanes_; }
    TrainingView* trainingView() const { return trainingView_; }
    TuningRunView* tuningView() const { return tuningView_; }
    TimelinePane* timelinePane() const { return timelinePane_; }
    CandidateDiagnostics* candidateDiagnostics() const { return diagnostics_; }
    ResultPanel* resultPanel() const { return resultPanel_; }
    EditLoopController* editLoop() const { return editLoop_; }
    SelectionHub* selectionHub() const { return hub_; }
    QString currentWorkspace() const { return currentWorkspace_; }
    QList<QDockWidget*> docks() const;

    // The files after the step shown in the editors (selected in any pane) against the files
    // after an earlier step (0: the episode's start), in a diff dialog. Null when no step with
    // rebuildable files is shown.
    QDialog* compareShownStepWith(qint64 sequence);
    qint64 shownStep() const { return shownStep_; }
    // Back from a step's files to the workspace (or task) the editors showed before.
    void backToWorkspace();
    // The context every pane follows (workbench_context.h), as the status bar names it.
    const WorkbenchContext& context() const;
    QString contextText() const;
    QAction* followAgentAction() const { return followAgent_; }

signals:
    void systemReportShown();
    void taskListShown();
    void taskOpened(const QString& path);

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
    // Files dropped on the window open as traces.
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    QDockWidget* addPane(const QString& objectName, const QString& title, QWidget* content,
                         Qt::DockWidgetArea area);
    void buildMenus();
    void placeDocksByDefault();
    void applyDefaultDockSizes();
    void showSystemReport(std::shared_ptr<const kwb::SystemReport> report);
    void showTaskList(std::shared_ptr<const TaskListSnapshot> snapshot);
    void openSettings();
    void loadModelPrices();
    void openTaskFromDialog();
    void openFileFromDialog();
    void useAgentProvider(const AppSettings::AgentProvider& provider);
    void onEpisodesFileRead(const QString& path, QList<kwb::agent::EpisodeSnapshotPtr> episodes,
                            const QString& error);
    void openWorkspaceFromDialog();
    void newWorkspaceFromDialog();
    // The candidate banner of the open workspace: where it is, what Ctrl+S does, and, for a
    // fast-path workspace on a machine without a GPU, what cannot run here.
    QString workspaceBanner() const;
    // Asks what to do with unsaved edits before the editors are replaced (Save, Discard,
    // Cancel); true when nothing is unsaved or the user saved or discarded.
    bool releaseUnsavedEdits(const QString& action);
    void connectSelection();
    void showStep(qint64 episodeId, qint64 step);
    bool showStepFiles(const agent::EpisodeSnapshotPtr& episode, qint64 step,
                       const QString& banner = {});
    // The current context (main_window_context.cpp): what each pane follows.
    void connectContext();
    void onContextChanged(const WorkbenchContext& context);
    void onEpisodeShown(const agent::EpisodeSnapshotPtr& episode);
    void onEditHistory(const agent::EpisodeSnapshotPtr& history);
    // A live episode's newest files and evaluation, while the user follows the agent.
    void followLatest(const agent::EpisodeSnapshotPtr& episode);
    // The reference shows the task an episode ran on, or says it is not on this machine.
    void showEpisodeTask(const agent::EpisodeRecord& record);
    // The episode (the agent pane's) or the open workspace's hand-edit history with this id.
    agent::EpisodeSnapshotPtr episodeById(qint64 id) const;
    QString stepTitle(const agent::EpisodeSnapshot& episode, qint64 step) const;
    void compareShownStep();
    void showAbout();
    void showShortcuts();

    AppSettings& settings_;
    EngineBridge bridge_;
    TaskListModel* taskModel_;
    TaskBrowser* taskBrowser_;
    CodeEditor* reference_;
    CandidateEditors* candidates_;
    LogPane* log_;
    SystemStatusBar* statusBar_;
    QDockWidget* tasksDock_ = nullptr;
    QDockWidget* referenceDock_ = nullptr;
    TimelinePane* timelinePane_ = nullptr;
    TraceOpener* traceOpener_ = nullptr;
    QDockWidget* timelineDock_ = nullptr;
    QDockWidget* rewardsDock_ = nullptr;
    QDockWidget* agentDock_ = nullptr;
    QDockWidget* logDock_ = nullptr;
    AgentPanes* agentPanes_ = nullptr;
    QDockWidget* runsDock_ = nullptr;
    RolloutPanes* rolloutPanes_ = nullptr;
    QDockWidget* rolloutsDock_ = nullptr;
    TrainingView* trainingView_ = nullptr;
    QDockWidget* trainingDock_ = nullptr;
    TuningRunView* tuningView_ = nullptr;
    QDockWidget* tuningDock_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    CandidateDiagnostics* diagnostics_ = nullptr;
    QDockWidget* problemsDock_ = nullptr;
    QDockWidget* assemblyDock_ = nullptr;
    CountersPane* countersPane_ = nullptr;
    QDockWidget* countersDock_ = nullptr;
    ResultPanel* resultPanel_ = nullptr;
    QDockWidget* resultDock_ = nullptr;
    EditLoopController* editLoop_ = nullptr;
    SelectionHub* hub_ = nullptr;
    QString currentWorkspace_;
    std::shared_ptr<const kwb::SystemReport> systemReport_;
    WelcomeDialog* welcome_ = nullptr; // made on first use
    bool taskListLoaded_ = false;
    bool defaultSizesPending_ = false;
    QString currentTaskPath_;
    // A step's files are written here to be shown like any candidate folder.
    std::unique_ptr<QTemporaryDir> stepViews_;
    agent::EpisodeSnapshotPtr shownEpisode_;
    qint64 shownStep_ = -1;
    QAction* compareStep_ = nullptr;
    QAction* backToWorkspace_ = nullptr;
    QAction* followAgent_ = nullptr;
    QLabel* contextLabel_ = nullptr;
    // The next live snapshot is the episode the user just started: it becomes the context.
    bool adoptLiveEpisode_ = false;
    // While following: the newest file change and evaluation already shown.
    qint64 followedFiles_ = 0;
    qint64 followedEvaluation_ = 0;
    // The pages of the last counters collection: the next one is compared with them.
    QStringList lastCollectedCounters_;
    // What the timeline asked of the engine is of ("Episode 7, step 12"), for the dock's title.
    QString requestedTimelineTitle_;
};

} // namespace kwb::ui
