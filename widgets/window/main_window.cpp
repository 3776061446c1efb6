#include "widgets/window/main_window.h"

#include "agent/providers/http_client.h"
#include "agent/store/edit_history.h"
#include "agent/store/model_prices.h"
#include "agent/store/store_reader.h"
#include "agent/store/trajectory_store.h"
#include "engine/evaluation/fast_kernel_build.h"
#include "engine/system/resource_paths.h"
#include "engine/workspace/task_catalog.h"
#include "engine/workspace/workspace.h"
#include "kwb/version.h"
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/agent/rollout_panes.h"
#include "widgets/core/selection_hub.h"
#include "widgets/core/step_files.h"
#include "widgets/core/step_inspection.h"
#include "widgets/counters/counters_pane.h"
#include "widgets/diagnostics/candidate_diagnostics.h"
#include "widgets/diagnostics/problems_pane.h"
#include "widgets/diff/diff_view.h"
#include "widgets/editors/assembly_view.h"
#include "widgets/editors/candidate_editors.h"
#include "widgets/editors/code_editor.h"
#include "widgets/models/task_list_model.h"
#include "widgets/result/result_panel.h"
#include "widgets/runs/rewards_pane.h"
#include "widgets/runs/rollouts_view.h"
#include "widgets/runs/runs_browser.h"
#include "widgets/timeline/timeline_pane.h"
#include "widgets/training/training_view.h"
#include "widgets/training/tuning_run_view.h"
#include "widgets/window/edit_loop_controller.h"
#include "widgets/window/log_pane.h"
#include "widgets/window/new_workspace_dialog.h"
#include "widgets/window/settings_dialog.h"
#include "widgets/window/shortcuts_help.h"
#include "widgets/window/system_status_bar.h"
#include "widgets/window/task_browser.h"
#include "widgets/window/theme.h"
#include "widgets/window/trace_opener.h"
#include "widgets/window/welcome_dialog.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QTimer>
#include <QUrl>

namespace kwb::ui {

MainWindow::MainWindow(AppSettings& settings, QWidget* parent)
    : QMainWindow(parent), settings_(settings), taskModel_(new TaskListModel(this)),
      taskBrowser_(new TaskBrowser(taskModel_, this)),
      reference_(new CodeEditor(SourceLanguage::Python, settings.theme(), this)),
      candidates_(new CandidateEditors(settings.theme(), this)), log_(new LogPane(this)),
      statusBar_(new SystemStatusBar(this)) {
    setWindowTitle(QStringLiteral("Kernel Workbench"));
    setObjectName(QStringLiteral("MainWindow"));
    setDockOptions(AnimatedDocks | AllowNestedDocks | AllowTabbedDocks);
    setStatusBar(statusBar_);
    reference_->setReadOnly(true);
    setCentralWidget(candidates_);
    candidates_->showNoCandidate(tr("Open a task from the task browser."));

    tasksDock_ = addPane("dock.tasks", tr("Tasks"), taskBrowser_, Qt::LeftDockWidgetArea);
    referenceDock_ =
        addPane("dock.reference", tr("Reference — model.py"), reference_, Qt::LeftDockWidgetArea);
    // The agent, rewards and runs panes share the store that `kwb agent` writes by default.
    agentPanes_ = new AgentPanes(
        bridge_, QString::fromStdString(agent::TrajectoryStore::defaultPath()), this);
    agentDock_ =
        addPane("dock.agent", tr("Agent"), agentPanes_->agentPane(), Qt::RightDockWidgetArea);
    runsDock_ =
        addPane("dock.runs", tr("Runs"), agentPanes_->runsBrowser(), Qt::BottomDockWidgetArea);
    rolloutPanes_ = new RolloutPanes(
        bridge_, *agentPanes_, [this] { return settings_.pythonInterpreter(); }, this);
    rolloutsDock_ =
        addPane("dock.rollouts", tr("Rollouts"), rolloutPanes_->view(), Qt::BottomDockWidgetArea);
    // Local training on the same store's rollout runs.
    trainingView_ =
        new TrainingView(QString::fromStdString(agent::TrajectoryStore::defaultPath()), this);
    trainingDock_ =
        addPane("dock.training", tr("Training"), trainingView_, Qt::BottomDockWidgetArea);
    // Local RL on kernel-tuning spaces: `kwb train tune` started, stopped and followed here.
    tuningView_ = new TuningRunView(bridge_, this);
    tuningDock_ =
        addPane("dock.tuning", tr("Kernel Tuning"), tuningView_, Qt::BottomDockWidgetArea);
    timelinePane_ = new TimelinePane(this);
    timelineDock_ =
        addPane("dock.timeline", tr("Timeline"), timelinePane_, Qt::BottomDockWidgetArea);
    rewardsDock_ = addPane("dock.rewards", tr("Rewards"), agentPanes_->rewardsPane(),
                           Qt::BottomDockWidgetArea);
    logDock_ = addPane("dock.log", tr("Log"), log_, Qt::BottomDockWidgetArea);
    countersPane_ = new CountersPane(&bridge_, this);
    countersDock_ =
        addPane("dock.counters", tr("Counters"), countersPane_, Qt::BottomDockWidgetArea);
    connect(countersPane_, &CountersPane::reportOpened, this,
            [this](const QString& description, const QString& error) {
                if (error.isEmpty())
                    log_->append(LogLevel::Info, tr("Counters: %1").arg(description));
                else
                    log_->append(LogLevel::Error, tr("Cannot open counters: %1").arg(error));
            });
    // Compile diagnostics while typing: squiggles in the editors, a problems list, PTX/SASS.
    diagnostics_ = new CandidateDiagnostics(candidates_, this);
    problemsDock_ = addPane("dock.problems", tr("Problems"), diagnostics_->problemsPane(),
                            Qt::BottomDockWidgetArea);
    assemblyDock_ = addPane("dock.assembly", tr("PTX / SASS"), diagnostics_->assemblyView(),
                            Qt::RightDockWidgetArea);
    resultPanel_ = new ResultPanel(this);
    resultDock_ = addPane("dock.result", tr("Result"), resultPanel_, Qt::RightDockWidgetArea);
    editLoop_ = new EditLoopController(bridge_, settings_, candidates_, resultPanel_, this);
    statusBar_->addPermanentWidget(editLoop_->progressWidget());
    hub_ = new SelectionHub(this);
    traceOpener_ = new TraceOpener(bridge_, *timelinePane_, settings_, this);
    connect(traceOpener_, &TraceOpener::showTimelineRequested, this, [this] {
        timelineDock_->show();
        timelineDock_->raise();
    });
    connect(traceOpener_, &TraceOpener::message, this, [this](const QString& text, bool problem) {
        log_->append(problem ? LogLevel::Error : LogLevel::Info, text);
        statusBar()->showMessage(text, 8000);
    });
    setAcceptDrops(true);
    placeDocksByDefault();
    buildMenus();

    connect(taskBrowser_, &TaskBrowser::taskActivated, this,
            [this](const QString& path) { openTask(path); });
    connect(agentPanes_, &AgentPanes::logMessage, this, [this](const QString& text, bool problem) {
        log_->append(problem ? LogLevel::Error : LogLevel::Info, text);
    });
    connect(rolloutPanes_, &RolloutPanes::logMessage, this,
            [this](const QString& text, bool problem) {
                log_->append(problem ? LogLevel::Error : LogLevel::Info, text);
            });
    agentPanes_->refreshRuns();
    rolloutPanes_->refreshRuns();
    connectSelection();
    connectContext();
    connect(&bridge_, &EngineBridge::systemReportReady, this, &MainWindow::showSystemReport);
    connect(&bridge_, &EngineBridge::taskListReady, this, &MainWindow::showTaskList);
    connect(&bridge_, &EngineBridge::episodesFileRead, this, &MainWindow::onEpisodesFileRead);
    connect(&bridge_, &EngineBridge::evaluationReady, resultDock_, &QDockWidget::raise);

    // Docks were stacked one under another while they were added, before being tabbed: the
    // layout's minimum height from then (about 940 px) would still clamp the window. Settle it on
    // the final arrangement before the window is sized.
    layout()->activate();
    if (!restoreGeometry(settings_.windowGeometry()))
        resize(defaultWindowSize());
    // Without a saved layout the dock sizes are applied again once the window has its real
    // size: sizes given to a window that is not shown yet come out in the wrong proportions.
    defaultSizesPending_ = !restoreState(settings_.windowState());

    log_->append(LogLevel::Info,
                 tr("Kernel Workbench %1 started").arg(QString::fromUtf8(build::kVersion)));
    loadModelPrices();
    useAgentProvider(settings_.agentProvider());
    refreshSystemReport();
    bridge_.requestTaskList(QString::fromStdString(kwb::bundledTasksDirectory()));
}

MainWindow::~MainWindow() = default;

QSize MainWindow::defaultWindowSize() const {
    // 1600x1000, or the screen's free area less room for the title bar on a smaller screen
    // (1366x768 laptops): a first start never opens taller or wider than the screen.
    const QScreen* display = screen() ? screen() : QGuiApplication::primaryScreen();
    const QRect available = display ? display->availableGeometry() : QRect(0, 0, 1600, 1000);
    constexpr int kTitleBar = 40;
    return {std::min(1600, available.width()), std::min(1000, available.height() - kTitleBar)};
}

QDockWidget* MainWindow::addPane(const QString& objectName, const QString& title, QWidget* content,
                                 Qt::DockWidgetArea area) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(objectName);
    dock->setWidget(content);
    dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                      QDockWidget::DockWidgetFloatable);
    addDockWidget(area, dock);
    return dock;
}

void MainWindow::placeDocksByDefault() {
    for (QDockWidget* dock : docks()) {
        dock->setFloating(false);
        dock->show();
    }
    addDockWidget(Qt::LeftDockWidgetArea, tasksDock_);
    addDockWidget(Qt::LeftDockWidgetArea, referenceDock_);
    splitDockWidget(tasksDock_, referenceDock_, Qt::Horizontal);
    tasksDock_->raise();
    addDockWidget(Qt::RightDockWidgetArea, agentDock_);
    addDockWidget(Qt::RightDockWidgetArea, resultDock_);
    addDockWidget(Qt::BottomDockWidgetArea, timelineDock_);
    tabifyDockWidget(timelineDock_, countersDock_);
    tabifyDockWidget(countersDock_, rewardsDock_);
    tabifyDockWidget(rewardsDock_, logDock_);
    tabifyDockWidget(logDock_, problemsDock_);
    // The runs browser's action row is wide; beside the timeline it does not squeeze the editors.
    tabifyDockWidget(rewardsDock_, runsDock_);
    tabifyDockWidget(runsDock_, rolloutsDock_);
    tabifyDockWidget(rolloutsDock_, trainingDock_);
    tabifyDockWidget(trainingDock_, tuningDock_);
    // One tab group on the right: stacked, the agent form and the result panel together would
    // need more height than a 1000 px window has. A finished evaluation raises its tab.
    tabifyDockWidget(agentDock_, assemblyDock_);
    tabifyDockWidget(assemblyDock_, resultDock_);
    agentDock_->raise();
    timelineDock_->raise();
    applyDefaultDockSizes();
}

void MainWindow::applyDefaultDockSizes() {
    // The candidate editors (the central widget) get what the docks leave: about 40% at 1600 px.
    const int w = std::max(width(), 1000);
    resizeDocks({tasksDock_, referenceDock_, agentDock_},
                {w * 14 / 100, w * 24 / 100, w * 24 / 100}, Qt::Horizontal);
    resizeDocks({timelineDock_}, {std::max(height(), 700) * 26 / 100}, Qt::Vertical);
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (defaultSizesPending_) {
        defaultSizesPending_ = false;
        QTimer::singleShot(0, this, [this] { applyDefaultDockSizes(); });
    }
}

QList<QDockWidget*> MainWindow::docks() const {
    return {tasksDock_,  referenceDock_, agentDock_,    timelineDock_, rewardsDock_,
            logDock_,    runsDock_,      rolloutsDock_, trainingDock_, tuningDock_,
            resultDock_, problemsDock_,  assemblyDock_, countersDock_};
}

void MainWindow::openTrace(const QString& path) {
    traceOpener_->open(path);
}

void MainWindow::openCounters(const QStringList& paths) {
    countersDock_->show();
    countersDock_->raise();
    countersPane_->openReport(paths);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.first().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() != 1 || !urls.first().isLocalFile())
        return;
    event->acceptProposedAction();
    openFile(urls.first().toLocalFile());
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open Task…"), QKeySequence::Open, this, &MainWindow::openTaskFromDialog);
    file->addAction(tr("Open &Workspace…"), QKeySequence(tr("Ctrl+Shift+O")), this,
                    &MainWindow::openWorkspaceFromDialog);
    file->addAction(tr("&New Workspace from Task…"), QKeySequence(tr("Ctrl+Shift+N")), this,
                    &MainWindow::newWorkspaceFromDialog);
    file->addAction(tr("Open &File… (task, trace or episodes)"), this,
                    &MainWindow::openFileFromDialog);
    backToWorkspace_ =
        file->addAction(tr("&Back to Workspace"), this, &MainWindow::backToWorkspace);
    backToWorkspace_->setEnabled(false);
    file->addSeparator();
    file->addAction(traceOpener_->openAction());
    file->addMenu(traceOpener_->recentMenu());
    file->addAction(tr("Open &Counters (ncu CSV)…"), this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Open Nsight Compute CSV: the details page, and the raw page"), QString(),
            tr("CSV files (*.csv);;All files (*)"));
        if (!files.isEmpty())
            openCounters(files);
    });
    file->addSeparator();
    file->addAction(tr("New &Rollout…"), this, [this] {
        rolloutsDock_->show();
        rolloutsDock_->raise();
        rolloutPanes_->launchFromDialog();
    });
    file->addAction(tr("New &Training Run…"), this, [this] {
        trainingDock_->show();
        trainingDock_->raise();
    });
    file->addAction(tr("New &Kernel Tuning Run…"), this, [this] {
        tuningDock_->show();
        tuningDock_->raise();
    });
    file->addAction(tr("&Settings…"), QKeySequence::Preferences, this, &MainWindow::openSettings);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* evaluate = menuBar()->addMenu(tr("&Evaluate"));
    evaluate->addAction(editLoop_->verifyOnSaveAction());
    evaluate->addAction(tr("Evaluate &Workspace Now"), QKeySequence(Qt::Key_F5), editLoop_,
                        &EditLoopController::evaluateNow);
    compareStep_ = evaluate->addAction(tr("&Compare Step With…"), QKeySequence(tr("Ctrl+Shift+D")),
                                       this, &MainWindow::compareShownStep);
    compareStep_->setEnabled(false);

    viewMenu_ = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* dock : docks())
        viewMenu_->addAction(dock->toggleViewAction());
    viewMenu_->addSeparator();
    followAgent_ = viewMenu_->addAction(tr("&Follow the Agent"));
    followAgent_->setCheckable(true);
    followAgent_->setShortcut(QKeySequence(tr("Ctrl+Shift+F")));
    followAgent_->setToolTip(tr("While an agent runs here, the editors and the result panel move "
                                "to each file change and evaluation it makes"));
    connect(followAgent_, &QAction::toggled, this, [this](bool on) {
        hub_->setFollowing(on);
        const agent::EpisodeSnapshotPtr live = agentPanes_->agentPane()->shownEpisode();
        if (on && live && hub_->context().episodeId == live->record.id) {
            followedFiles_ = followedEvaluation_ = 0; // show the newest again, whatever was seen
            followLatest(live);
        }
    });
    viewMenu_->addAction(tr("&Reset Layout"), this, &MainWindow::resetLayout);
    viewMenu_->addAction(tr("Re-detect &System"), this, &MainWindow::refreshSystemReport);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Welcome…"), this, &MainWindow::showWelcome);
    help->addAction(tr("&Keyboard Shortcuts"), QKeySequence::HelpContents, this,
                    &MainWindow::showShortcuts);
    help->addAction(tr("&About Kernel Workbench"), this, &MainWindow::showAbout);
}

void MainWindow::refreshSystemReport() {
    statusBar_->showDetecting();
    bridge_.requestSystemReport(settings_.pythonInterpreter());
}

void MainWindow::showSystemReport(std::shared_ptr<const kwb::SystemReport> report) {
    systemReport_ = std::move(report);
    statusBar_->showReport(*systemReport_);
    if (welcome_)
        welcome_->showReport(systemReport_);
    log_->append(systemReport_->gpus.hasGpu() ? LogLevel::Info : LogLevel::Warning,
                 QString::fromStdString(systemReport_->gpus.status));
    countersPane_->setCollectPossible(
        systemReport_->gpus.hasGpu(),
        tr("Collecting counters needs an NVIDIA GPU and Nsight Compute (ncu); this machine has "
           "no GPU. Counters collected on a GPU host open here with Open ncu CSV…"));
    tuningView_->setStartPossible(
        systemReport_->gpus.hasGpu(),
        tr("A tuning run scores every kernel it tries on a GPU, and this machine has none. Open "
           "Run… shows a run's folder made on a GPU host (kwb train tune --out FOLDER)."));
    // What the open workspace can do here is known now.
    if (!currentWorkspace_.isEmpty() && candidates_->directory() == currentWorkspace_)
        candidates_->setBanner(workspaceBanner());
    log_->append(systemReport_->python.usable() ? LogLevel::Info : LogLevel::Error,
                 QStringLiteral("Python: %1 [%2]")
                     .arg(QString::fromStdString(systemReport_->python.summary()),
                          QString::fromStdString(systemReport_->python.path)));
    emit systemReportShown();
}

void MainWindow::showTaskList(std::shared_ptr<const TaskListSnapshot> snapshot) {
    taskModel_->setTasks(snapshot->tasks);
    taskListLoaded_ = true;
    taskBrowser_->setStatusText(
        tr("%n task(s) in %1", nullptr, static_cast<int>(snapshot->tasks.size()))
            .arg(snapshot->directory));
    for (const std::string& problem : snapshot->problems)
        log_->append(LogLevel::Warning, QString::fromStdString(problem));
    if (!currentTaskPath_.isEmpty())
        taskBrowser_->selectTask(currentTaskPath_);
    emit taskListShown();
}

bool MainWindow::openTask(const QString& path) {
    if (!releaseUnsavedEdits(tr("open another task")))
        return false;
    std::string error;
    kwb::TaskInfo task = kwb::readTaskInfo(path.toStdString(), &error);
    if (task.id.empty()) {
        log_->append(LogLevel::Error,
                     tr("Cannot open task: %1").arg(QString::fromStdString(error)));
        return false;
    }
    QFile file(QString::fromStdString(task.path));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        log_->append(LogLevel::Error,
                     tr("Cannot read %1: %2").arg(file.fileName(), file.errorString()));
        return false;
    }
    reference_->setSource(QString::fromUtf8(file.readAll()));
    currentTaskPath_ = QString::fromStdString(task.path);
    currentWorkspace_.clear();
    editLoop_->setWorkspace({});
    referenceDock_->setWindowTitle(
        tr("Reference — %1").arg(QFileInfo(currentTaskPath_).fileName()));
    setWindowTitle(tr("%1 — Kernel Workbench").arg(QString::fromStdString(task.title)));
    if (!task.solutionDirectory.empty()) {
        candidates_->showCandidate(
            QString::fromStdString(task.solutionDirectory), true,
            tr("Bundled reference solution for %1 (read-only). Its kernels are "
               "real CUDA; workspaces you can edit are created per task.")
                .arg(QString::fromStdString(task.id)));
    } else {
        candidates_->showNoCandidate(
            tr("%1 has no candidate yet. A workspace with model_new.py and kernels/ is created "
               "when you start editing or launch an agent on this task.")
                .arg(QString::fromStdString(task.id)));
    }
    taskBrowser_->selectTask(currentTaskPath_);
    hub_->setContext(WorkbenchContext::task(currentTaskPath_));
    agentPanes_->agentPane()->setTaskPath(currentTaskPath_);
    settings_.setLastTaskPath(currentTaskPath_);
    log_->append(LogLevel::Info,
                 tr("Opened task %1 (%2)").arg(QString::fromStdString(task.id), currentTaskPath_));
    emit taskOpened(currentTaskPath_);
    return true;
}

void MainWindow::openTaskFromDialog() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open KernelBench task"), QString::fromStdString(kwb::bundledTasksDirectory()),
        tr("Python task (*.py)"));
    if (!path.isEmpty())
        openTask(path);
}

void MainWindow::newWorkspaceFromDialog() {
    NewWorkspaceDialog dialog(currentTaskPath_, systemReport_ && systemReport_->gpus.hasGpu(),
                              this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    createWorkspace(dialog.choice());
}

bool MainWindow::createWorkspace(const NewWorkspaceDialog::Choice& choice) {
    const kwb::WorkspaceInitResult made = NewWorkspaceDialog::create(choice);
    if (!made.ok) {
        log_->append(LogLevel::Error,
                     tr("Cannot create the workspace: %1").arg(QString::fromStdString(made.error)));
        statusBar()->showMessage(tr("Cannot create the workspace"), 8000);
        return false;
    }
    log_->append(LogLevel::Info,
                 tr("Created workspace %1 (%2)")
                     .arg(QString::fromStdString(made.directory),
                          choice.fastPath ? tr("fast path") : tr("CUDA-Agent layout")));
    return openWorkspace(QString::fromStdString(made.directory));
}

bool MainWindow::openWorkspace(const QString& directory) {
    if (!kwb::isWorkspace(directory.toStdString())) {
        log_->append(LogLevel::Error, tr("%1 is not a workspace (it needs model.py and "
                                         "model_new.py; create one with File > New Workspace "
                                         "from Task or `kwb workspace init`)")
                                          .arg(directory));
        return false;
    }
    if (!releaseUnsavedEdits(tr("open the workspace")))
        return false;
    const QDir root(directory);
    QFile model(root.filePath(QStringLiteral("model.py")));
    if (!model.open(QIODevice::ReadOnly | QIODevice::Text)) {
        log_->append(LogLevel::Error,
                     tr("Cannot read %1: %2").arg(model.fileName(), model.errorString()));
        return false;
    }
    reference_->setSource(QString::fromUtf8(model.readAll()));
    referenceDock_->setWindowTitle(tr("Reference — model.py (read-only)"));
    currentWorkspace_ = root.absolutePath();
    candidates_->showCandidate(currentWorkspace_, false, workspaceBanner());
    editLoop_->setWorkspace(currentWorkspace_);
    hub_->setContext(WorkbenchContext::ofWorkspace(currentWorkspace_));
    // The workspace's task is the one an agent started now works on, not the last task opened.
    agentPanes_->agentPane()->setTaskPath(root.filePath(QStringLiteral("model.py")));
    setWindowTitle(tr("%1 — Kernel Workbench").arg(root.dirName()));
    log_->append(LogLevel::Info, tr("Opened workspace %1").arg(currentWorkspace_));
    return true;
}

QString MainWindow::workspaceBanner() const {
    QString banner =
        tr("Workspace %1. Ctrl+S saves the file%2.")
            .arg(QDir::toNativeSeparators(currentWorkspace_),
                 settings_.verifyOnSave() ? tr(" and evaluates the workspace") : QString());
    const bool fastPath =
        kwb::usesFastKernels((QDir(currentWorkspace_).filePath("model_new.py")).toStdString());
    if (fastPath && systemReport_ && !systemReport_->gpus.hasGpu())
        banner += tr(" No CUDA GPU here: its fast-path kernels cannot run, so you get NVRTC's "
                     "diagnostics, PTX and resource use while typing, and evaluations stop after "
                     "the compile. A CUDA-Agent workspace verifies on the CPU.");
    return banner;
}

void MainWindow::openWorkspaceFromDialog() {
    const QString directory = QFileDialog::getExistingDirectory(
        this, tr("Open workspace (model.py + model_new.py)"), settings_.workspaceRoot());
    if (!directory.isEmpty())
        openWorkspace(directory);
}

void MainWindow::connectSelection() {
    connect(editLoop_, &EditLoopController::message, this,
            [this](const QString& text, bool problem) {
                log_->append(problem ? LogLevel::Error : LogLevel::Info, text);
            });
    // The timeline dock's title names what its timeline is of (the current context's step, the
    // workspace's latest evaluation, or a trace file).
    connect(editLoop_, &EditLoopController::timelineReady, this,
            [this](kwb::timeline::TimelineSnapshot timeline) {
                timelinePane_->setTimeline(std::move(timeline));
                timelineDock_->setWindowTitle(
                    tr("Timeline — %1, latest evaluation")
                        .arg(QFileInfo(editLoop_->workspace()).fileName()));
            });
    connect(traceOpener_, &TraceOpener::finished, this, [this](const QString& path, bool opened) {
        if (opened)
            timelineDock_->setWindowTitle(tr("Timeline — %1").arg(QFileInfo(path).fileName()));
    });
    connect(&bridge_, &EngineBridge::timelineReady, this,
            [this](const QString& records, kwb::timeline::TimelineSnapshot timeline) {
                if (!timeline) {
                    log_->append(LogLevel::Error,
                                 tr("Cannot read the timeline records %1").arg(records));
                    return;
                }
                timelinePane_->setTimeline(std::move(timeline));
                timelineDock_->setWindowTitle(tr("Timeline — %1").arg(requestedTimelineTitle_));
            });
    connect(editLoop_, &EditLoopController::evaluationShown, hub_, &SelectionHub::selectEvaluation);
    // Steps: a reward point or a conversation row selects; the hub tells every pane.
    connect(agentPanes_->rewardsPane(), &RewardsPane::stepSelected, hub_,
            &SelectionHub::selectStep);
    connect(agentPanes_->agentPane(), &AgentPane::stepSelected, hub_, &SelectionHub::selectStep);
    connect(hub_, &SelectionHub::stepSelected, agentPanes_->agentPane(), &AgentPane::selectStep);
    connect(hub_, &SelectionHub::stepSelected, this, &MainWindow::showStep);
    // Kernels: a timeline click selects its statistics row.
    connect(timelinePane_, &TimelinePane::kernelSelected, hub_,
            [this](const QString& name, int, quint32, qint64 startNs, qint64 endNs) {
                hub_->selectKernel(name, startNs, endNs);
            });
    connect(hub_, &SelectionHub::kernelSelected, timelinePane_,
            [this](const QString& name) { timelinePane_->selectStatisticsRow(name); });
    // Counters on demand: the timeline's kernel is the dialog's filter; the run goes through the
    // edit loop (the open workspace, its progress and Cancel), the pages open in the dock.
    connect(hub_, &SelectionHub::kernelSelected, countersPane_,
            [this](const QString& name) { countersPane_->setKernelHint(name); });
    connect(countersPane_, &CountersPane::collectRequested, this,
            [this](const kwb::CounterCollection& collection) {
                if (currentWorkspace_.isEmpty()) {
                    countersPane_->showCollecting(tr("Open a workspace to collect its counters "
                                                     "(File > Open Workspace… or New Workspace "
                                                     "from Task…)"));
                    return;
                }
                countersPane_->showCollecting(
                    tr("Collecting counters from %1…")
                        .arg(QDir::toNativeSeparators(currentWorkspace_)));
                editLoop_->collectCounters(collection);
            });
    connect(editLoop_, &EditLoopController::countersCollected, this,
            [this](const QString& details, const QString& raw, const QString& problem) {
                if (details.isEmpty()) {
                    countersPane_->showCollecting(tr("No counters: %1").arg(problem));
                    log_->append(LogLevel::Error, tr("No counters collected: %1").arg(problem));
                    return;
                }
                log_->append(LogLevel::Info, tr("Counters collected: %1").arg(details));
                const QStringList pages =
                    raw.isEmpty() ? QStringList{details} : QStringList{details, raw};
                // Two collections in a row compare: the previous one becomes the baseline.
                if (!lastCollectedCounters_.isEmpty())
                    countersPane_->openBaseline(lastCollectedCounters_);
                lastCollectedCounters_ = pages;
                openCounters(pages);
            });
}

void MainWindow::showStep(qint64 episodeId, qint64 step) {
    const agent::EpisodeSnapshotPtr episode = episodeById(episodeId);
    if (!episode)
        return;
    const StepInspection inspection = inspectStep(*episode, step);
    if (!inspection.found)
        return;
    // A step picked in an episode that is not the context makes it the context, at that step.
    const WorkbenchContext& now = hub_->context();
    const bool history = episodeId == agent::kEditHistoryEpisodeId;
    if (!history && (now.kind != WorkbenchContext::Kind::Episode || now.episodeId != episodeId)) {
        WorkbenchContext context = WorkbenchContext::episode(
            episodeId, QString::fromStdString(episode->record.task), false);
        context.step = step;
        hub_->setContext(context);
        showEpisodeTask(episode->record);
        agentPanes_->rewardsPane()->showEpisode(episode);
    }
    const QString title = stepTitle(*episode, step);
    if (inspection.evaluation) {
        resultPanel_->showEvaluation(inspection.evaluation, inspection.previousEvaluation, title);
        // Its CUPTI timeline, when the evaluation recorded one, read on the engine thread.
        const QString records = QString::fromStdString(inspection.evaluation->timelineRecordPath);
        if (!records.isEmpty()) {
            requestedTimelineTitle_ = title;
            bridge_.requestTimeline(records);
        }
    }
    const bool filesShown = showStepFiles(episode, step);
    const QString note =
        filesShown
            ? tr("# %1: the changes recorded since the previous evaluation. The other tabs hold "
                 "the files after this step.\n\n")
                  .arg(title)
            : tr("# %1. This episode's store records only diffs per step, not the files "
                 "themselves; these are the changes recorded since the previous "
                 "evaluation.\n\n")
                  .arg(title);
    candidates_->showStepChanges(tr("Step %1 changes").arg(step),
                                 note + (inspection.changes.isEmpty()
                                             ? tr("(no file changes recorded)")
                                             : inspection.changes));
}

bool MainWindow::showStepFiles(const agent::EpisodeSnapshotPtr& episode, qint64 step,
                               const QString& banner) {
    const StepFiles files = filesAfterStep(*episode, step);
    if (!files.complete || files.files.empty())
        return false;
    // Following the agent never asks: the user's unsaved text stays, and the next step after a
    // save or a revert is shown.
    if (!banner.isEmpty() ? candidates_->hasUnsavedChanges()
                          : !releaseUnsavedEdits(tr("show step %1").arg(step)))
        return false;
    if (!stepViews_)
        stepViews_ = std::make_unique<QTemporaryDir>();
    const QString folder = stepViews_->filePath(
        QStringLiteral("episode-%1-step-%2").arg(episode->record.id).arg(step));
    QString error;
    if (!stepViews_->isValid() || !writeStepFiles(files, folder, &error)) {
        log_->append(LogLevel::Error,
                     tr("Cannot show the files of step %1: %2")
                         .arg(step)
                         .arg(error.isEmpty() ? tr("no temporary folder") : error));
        return false;
    }
    candidates_->showCandidate(
        folder, true,
        !banner.isEmpty()
            ? banner
            : tr("%1 (read-only). Evaluate > Compare Step With… diffs it against an earlier "
                 "evaluation; File > Back to Workspace returns to your files.")
                  .arg(stepTitle(*episode, step)));
    shownEpisode_ = episode;
    shownStep_ = step;
    compareStep_->setEnabled(true);
    backToWorkspace_->setEnabled(true);
    return true;
}

QDialog* MainWindow::compareShownStepWith(qint64 sequence) {
    if (!shownEpisode_ || shownStep_ < 0 || sequence >= shownStep_)
        return nullptr;
    const StepFiles after = filesAfterStep(*shownEpisode_, shownStep_);
    const StepFiles before = filesAfterStep(*shownEpisode_, sequence);
    if (!after.complete || !before.complete)
        return nullptr;
    const auto [left, right] = joinedDifferences(before, after);
    const QString from = sequence == 0 ? tr("the start") : tr("step %1").arg(sequence);
    const QString whose = shownEpisode_->record.id == agent::kEditHistoryEpisodeId
                              ? tr("Hand edits")
                              : tr("Episode %1").arg(shownEpisode_->record.id);
    return showDiffDialog(this, tr("%1: %2 -> step %3").arg(whose, from).arg(shownStep_), left,
                          right);
}

void MainWindow::compareShownStep() {
    if (!shownEpisode_ || shownStep_ < 0)
        return;
    const std::vector<ComparableStep> choices = comparableSteps(*shownEpisode_, shownStep_);
    QStringList labels;
    for (const ComparableStep& choice : choices)
        labels << choice.label;
    bool ok = false;
    const QString picked = QInputDialog::getItem(this, tr("Compare step %1 with").arg(shownStep_),
                                                 tr("Earlier state:"), labels, 0, false, &ok);
    if (!ok)
        return;
    const auto index = labels.indexOf(picked);
    if (index >= 0)
        compareShownStepWith(choices[static_cast<std::size_t>(index)].sequence);
}

void MainWindow::backToWorkspace() {
    shownEpisode_.reset();
    shownStep_ = -1;
    compareStep_->setEnabled(false);
    backToWorkspace_->setEnabled(false);
    if (!currentWorkspace_.isEmpty())
        openWorkspace(currentWorkspace_);
    else if (!currentTaskPath_.isEmpty())
        openTask(currentTaskPath_);
    else
        candidates_->showNoCandidate(tr("Open a task or a workspace to edit its candidate."));
}

void MainWindow::loadModelPrices() {
    // A small local file, read once: the agent pane's cost meter uses the user's prices.
    const QString file = settings_.modelPricesFile();
    if (!QFileInfo::exists(file))
        return;
    std::string error;
    const int entries = agent::loadPriceOverrides(file.toStdString(), &error);
    if (!error.empty())
        log_->append(LogLevel::Error, tr("Model prices not loaded: %1 (the built-in list prices "
                                         "are used)")
                                          .arg(QString::fromStdString(error)));
    else
        log_->append(LogLevel::Info, tr("Loaded %1 model price(s) from %2").arg(entries).arg(file));
}

void MainWindow::openSettings() {
    SettingsDialog dialog(settings_, bridge_, this);
    const Theme before = settings_.theme();
    const QString pythonBefore = settings_.pythonInterpreter();
    if (dialog.exec() != QDialog::Accepted)
        return;
    if (settings_.theme() != before) {
        applyApplicationTheme(settings_.theme());
        reference_->applyTheme(settings_.theme());
        candidates_->applyTheme(settings_.theme());
        diagnostics_->assemblyView()->applyTheme(settings_.theme());
    }
    if (settings_.pythonInterpreter() != pythonBefore)
        refreshSystemReport();
}

void MainWindow::showShortcuts() {
    ShortcutsDialog dialog(collectShortcuts(this),
                           tr("Timeline: ") + QString(TimelinePane::keyHelp()).replace('\n', " · "),
                           this);
    dialog.exec();
}

void MainWindow::showAbout() {
    QString text = tr("<h3>Kernel Workbench %1</h3><p>Optimize GPU kernels with LLM agents and "
                      "reinforcement learning.</p>")
                       .arg(QString::fromUtf8(build::kVersion));
    text += QStringLiteral("<p>Qt %1<br>CUDA toolkit %2<br>%3</p>")
                .arg(QString::fromUtf8(qVersion()), QString::fromUtf8(build::kCudaToolkitVersion),
                     QString::fromStdString(kwb::agent::curlVersionText()));
    if (systemReport_)
        text += QStringLiteral("<p>%1<br>%2<br>%3</p>")
                    .arg(QString::fromStdString(systemReport_->gpuText()),
                         QString::fromStdString(systemReport_->driverText()),
                         QString::fromStdString(systemReport_->pythonText()).toHtmlEscaped());
    QMessageBox::about(this, tr("About Kernel Workbench"), text);
}

void MainWindow::saveLayout() {
    settings_.setWindowLayout(saveGeometry(), saveState());
}

void MainWindow::resetLayout() {
    placeDocksByDefault();
}

bool MainWindow::releaseUnsavedEdits(const QString& action) {
    const QStringList unsaved = candidates_->unsavedFiles();
    if (unsaved.isEmpty())
        return true;
    QMessageBox box(QMessageBox::Warning, tr("Unsaved changes"),
                    tr("%1 in %2 has unsaved changes. Save before you %3?")
                        .arg(unsaved.join(QStringLiteral(", ")),
                             QDir::toNativeSeparators(candidates_->directory()), action),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("unsavedChangesBox"));
    box.setDefaultButton(QMessageBox::Save);
    switch (box.exec()) {
    case QMessageBox::Save: {
        QString error;
        if (candidates_->saveAll(&error))
            return true;
        log_->append(LogLevel::Error, error);
        return false;
    }
    case QMessageBox::Discard:
        log_->append(LogLevel::Info, tr("Discarded unsaved changes to %1").arg(unsaved.join(", ")));
        return true;
    default:
        return false;
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!releaseUnsavedEdits(tr("quit"))) {
        event->ignore();
        return;
    }
    saveLayout();
    settings_.sync();
    event->accept();
}

} // namespace kwb::ui
