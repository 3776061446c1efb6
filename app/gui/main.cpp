// kernel-workbench: the desktop GUI.
#include "agent/store/opened_file.h"
#include "engine/system/resource_paths.h"
#include "kwb/version.h"
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/agent/rollout_panes.h"
#include "widgets/core/app_settings.h"
#include "widgets/core/workbench_fonts.h"
#include "widgets/counters/counters_pane.h"
#include "widgets/diagnostics/candidate_diagnostics.h"
#include "widgets/editors/assembly_view.h"
#include "widgets/editors/candidate_editors.h"
#include "widgets/models/task_list_model.h"
#include "widgets/training/tuning_run_view.h"
#include "widgets/window/main_window.h"
#include "widgets/window/theme.h"
#include "widgets/window/trace_opener.h"
#include "widgets/window/welcome_dialog.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>
#include <cstring>
#include <memory>

namespace {

bool argumentsRequestScreenshot(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--screenshot") == 0 ||
            std::strncmp(argv[i], "--screenshot=", 13) == 0)
            return true;
    return false;
}

// Lets queued engine results arrive until `ready` holds or the deadline passes.
bool waitUntil(const std::function<bool()>& ready, int timeoutMs) {
    QElapsedTimer timer;
    timer.start();
    while (!ready() && timer.elapsed() < timeoutMs)
        QApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents, 50);
    return ready();
}

QString firstTaskWithSolution(const kwb::ui::TaskListModel& model) {
    for (int row = 0; row < model.rowCount(); ++row)
        if (model.index(row).data(kwb::ui::TaskListModel::HasSolutionRole).toBool())
            return model.index(row).data(kwb::ui::TaskListModel::PathRole).toString();
    return model.rowCount() > 0 ? model.index(0).data(kwb::ui::TaskListModel::PathRole).toString()
                                : QString();
}

} // namespace

int main(int argc, char** argv) {
    // A screenshot needs no display: render offscreen unless the caller chose a platform.
    if (argumentsRequestScreenshot(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("kernel-workbench"));
    QApplication::setOrganizationName(QStringLiteral("kernel-workbench"));
    QApplication::setApplicationVersion(QString::fromUtf8(kwb::build::kVersion));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Kernel Workbench: optimize GPU kernels with LLM agents and RL"));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption taskOption("task", "Open this KernelBench task file.", "PATH");
    QCommandLineOption workspaceOption(
        "workspace", "Open this workspace folder (model.py + model_new.py + kernels/).", "DIR");
    QCommandLineOption screenshotOption(
        "screenshot", "Render the main window offscreen to a PNG and exit.", "FILE");
    QCommandLineOption sizeOption("size", "Window size for --screenshot (default 1600x1000).",
                                  "WxH", "1600x1000");
    QCommandLineOption settingsOption(
        "settings", "Use this INI file for settings instead of the user's.", "FILE");
    QCommandLineOption themeOption("theme", "Override the theme: dark or light.", "NAME");
    QCommandLineOption viewOption(
        "view",
        "Bring this pane to the front: tasks, reference, agent, runs, rollouts, training, tuning, "
        "timeline, counters, rewards, log, result, problems, assembly; welcome (the welcome "
        "page: a screenshot shows it alone).",
        "NAME");
    QCommandLineOption tuningRunOption(
        "tuning-run", "Open a kwb train tune run's folder in the Kernel Tuning pane.", "FOLDER");
    QCommandLineOption episodeOption(
        "episode", "Open this episode of the trajectory store ($KWB_STATE_DIR/trajectories.db).",
        "ID");
    QCommandLineOption traceOption(
        "trace", "Open this trace in the timeline: kwb-cupti records or Chrome/Perfetto JSON.",
        "FILE");
    QCommandLineOption countersOption(
        "counters",
        "Open Nsight Compute CSV in the Counters pane: the details page, and the raw page for "
        "the roofline (repeat the option for the second file).",
        "FILE");
    QCommandLineOption fileOption(
        "file",
        "Show this file of the opened workspace or solution, with the cursor on LINE "
        "(e.g. kernels/gelu.cu:12).",
        "PATH[:LINE]");
    parser.addPositionalArgument(
        "file", "A task (.py), workspace folder, trace or exported episodes to open.", "[FILE]");
    parser.addOptions({taskOption, workspaceOption, screenshotOption, sizeOption, settingsOption,
                       themeOption, viewOption, episodeOption, tuningRunOption, traceOption,
                       countersOption, fileOption});
    parser.process(app);

    const bool screenshot = parser.isSet(screenshotOption);
    // Screenshots start from defaults, never from the user's saved layout or last task.
    QTemporaryDir scratch;
    std::unique_ptr<kwb::ui::AppSettings> settings;
    if (parser.isSet(settingsOption))
        settings = std::make_unique<kwb::ui::AppSettings>(parser.value(settingsOption));
    else if (screenshot)
        settings = std::make_unique<kwb::ui::AppSettings>(scratch.filePath("settings.ini"));
    else
        settings = std::make_unique<kwb::ui::AppSettings>();
    if (parser.isSet(themeOption))
        settings->setTheme(kwb::ui::themeFromName(parser.value(themeOption)));
    kwb::ui::applyApplicationTheme(settings->theme());
    // A screenshot looks the same on every machine: the interface font is pinned too (the code
    // font always is).
    if (screenshot)
        kwb::ui::pinInterfaceFont();

    kwb::ui::MainWindow window(*settings);
    QString task = parser.value(taskOption);
    if (!task.isEmpty() && !QFileInfo::exists(task)) {
        std::fprintf(stderr, "kernel-workbench: task file not found: %s\n", qPrintable(task));
        return 2;
    }
    QString workspace = parser.value(workspaceOption);
    const QString file = parser.positionalArguments().value(0);
    if (parser.positionalArguments().size() > 1) {
        std::fprintf(stderr, "kernel-workbench: one FILE at a time\n");
        return 2;
    }
    if (!file.isEmpty() && !QFileInfo::exists(file)) {
        std::fprintf(stderr, "kernel-workbench: not found: %s\n", qPrintable(file));
        return 2;
    }
    const kwb::agent::OpenedFile opened = file.isEmpty()
                                              ? kwb::agent::OpenedFile{}
                                              : kwb::agent::classifyOpenedFile(file.toStdString());
    const kwb::agent::OpenedFileKind fileKind = opened.kind;
    if (!file.isEmpty() && fileKind == kwb::agent::OpenedFileKind::Unknown) {
        std::fprintf(stderr, "kernel-workbench: %s\n", opened.why.c_str());
        return 2;
    }
    // A task or workspace FILE stands for --task / --workspace; a trace or episodes open over
    // the last task.
    if (fileKind == kwb::agent::OpenedFileKind::Task)
        task = file;
    if (fileKind == kwb::agent::OpenedFileKind::Workspace)
        workspace = file;
    if (task.isEmpty() && workspace.isEmpty() && !screenshot &&
        QFileInfo::exists(settings->lastTaskPath()))
        task = settings->lastTaskPath();
    if (!workspace.isEmpty()) {
        // openWorkspace says why in the log; a bad folder on the command line is a usage error.
        if (!window.openWorkspace(workspace)) {
            std::fprintf(stderr, "kernel-workbench: not a workspace folder: %s\n",
                         qPrintable(workspace));
            return 2;
        }
    } else if (!task.isEmpty()) {
        window.openTask(task);
    } else {
        QObject::connect(&window, &kwb::ui::MainWindow::taskListShown, &window, [&window] {
            if (window.currentTaskPath().isEmpty()) {
                const QString first = firstTaskWithSolution(*window.taskListModel());
                if (!first.isEmpty())
                    window.openTask(first);
            }
        });
    }

    // A .cu file shown waits (for a screenshot) for its NVRTC compile, whose PTX the assembly
    // view lists.
    bool fileDone = true;
    if (parser.isSet(fileOption)) {
        const QString value = parser.value(fileOption);
        const qsizetype colon = value.lastIndexOf(':');
        bool hasLine = false;
        const int line = colon > 0 ? value.mid(colon + 1).toInt(&hasLine) : 0;
        const QString file = hasLine ? value.left(colon) : value;
        if (!window.candidateEditors()->jumpTo(file, hasLine ? line : 1, 0)) {
            std::fprintf(stderr, "kernel-workbench: no file %s among the open files (%s)\n",
                         qPrintable(file),
                         qPrintable(window.candidateEditors()->openFiles().join(", ")));
            return 2;
        }
        fileDone = !(file.endsWith(".cu") || file.endsWith(".cuh"));
    }

    const bool welcomeView = parser.value(viewOption) == QStringLiteral("welcome");
    if (parser.isSet(viewOption) && !welcomeView) {
        auto* dock = window.findChild<QDockWidget*>("dock." + parser.value(viewOption));
        if (!dock) {
            std::fprintf(stderr, "kernel-workbench: unknown view '%s'\n",
                         qPrintable(parser.value(viewOption)));
            return 2;
        }
        dock->show();
        dock->raise();
    }
    const QString trace =
        fileKind == kwb::agent::OpenedFileKind::Trace ? file : parser.value(traceOption);
    const bool episodesFile = fileKind == kwb::agent::OpenedFileKind::Episodes;
    if (episodesFile)
        window.openFile(file);
    bool traceDone = trace.isEmpty();
    if (!trace.isEmpty()) {
        if (!QFileInfo(trace).isFile()) {
            std::fprintf(stderr, "kernel-workbench: trace file not found: %s\n", qPrintable(trace));
            return 2;
        }
        QObject::connect(window.traceOpener(), &kwb::ui::TraceOpener::finished, &window,
                         [&traceDone] { traceDone = true; });
        window.openTrace(trace);
    }
    const QStringList counters = parser.values(countersOption);
    bool countersDone = counters.isEmpty();
    if (!counters.isEmpty()) {
        for (const QString& file : counters)
            if (!QFileInfo(file).isFile()) {
                std::fprintf(stderr, "kernel-workbench: counters file not found: %s\n",
                             qPrintable(file));
                return 2;
            }
        QObject::connect(window.countersPane(), &kwb::ui::CountersPane::reportOpened, &window,
                         [&countersDone] { countersDone = true; });
        window.openCounters(counters);
    }
    const qint64 episode = parser.value(episodeOption).toLongLong();
    if (episode > 0)
        window.agentPanes()->openEpisode(episode);
    const QString tuningRun = parser.value(tuningRunOption);
    if (!tuningRun.isEmpty()) {
        if (!QFileInfo(tuningRun).isDir()) {
            std::fprintf(stderr, "kernel-workbench: tuning run folder not found: %s\n",
                         qPrintable(tuningRun));
            return 2;
        }
        window.tuningView()->openRun(tuningRun);
        if (!parser.isSet(viewOption))
            window.findChild<QDockWidget*>(QStringLiteral("dock.tuning"))->raise();
    }

    if (!screenshot) {
        window.show();
        if (welcomeView || settings->showWelcomeAtStart())
            window.showWelcome();
        return app.exec();
    }

    const QStringList size = parser.value(sizeOption).split('x');
    const int width = size.value(0).toInt(), height = size.value(1).toInt();
    if (width < 200 || height < 150) {
        std::fprintf(stderr, "kernel-workbench: --size must look like 1600x1000\n");
        return 2;
    }
    window.resize(width, height);
    window.show();
    // Detection imports torch in a child process: seconds, not minutes.
    const bool complete = waitUntil(
        [&] {
            return window.hasSystemReport() && window.hasTaskList() &&
                   (!window.currentTaskPath().isEmpty() || !workspace.isEmpty()) &&
                   ((episode <= 0 && !episodesFile) ||
                    window.agentPanes()->agentPane()->shownEpisode()) &&
                   window.rolloutPanes()->hasShownRuns() && traceDone && countersDone &&
                   (tuningRun.isEmpty() || window.tuningView()->snapshot()) &&
                   (fileDone ||
                    !window.candidateDiagnostics()->assemblyView()->shownText().isEmpty());
        },
        120000);
    if (!complete)
        std::fprintf(stderr,
                     "kernel-workbench: warning: screenshot taken before detection finished\n");
    // Panes that filled in while detection ran may have grown the window past the asked size.
    window.resize(width, height);
    QApplication::processEvents();
    // A tuning run's curves need more than the bottom docks' default quarter of the height.
    if (!tuningRun.isEmpty()) {
        window.resizeDocks({window.findChild<QDockWidget*>(QStringLiteral("dock.tuning"))},
                           {height * 55 / 100}, Qt::Vertical);
        QApplication::processEvents();
    }
    const QString out = parser.value(screenshotOption);
    QWidget* shown = &window;
    if (welcomeView) {
        window.showWelcome();
        QApplication::processEvents();
        shown = window.welcomeDialog();
    }
    if (!shown->grab().save(out, "PNG")) {
        std::fprintf(stderr, "kernel-workbench: cannot write %s\n", qPrintable(out));
        return 1;
    }
    QString what = workspace.isEmpty() ? QStringLiteral("task ") + window.currentTaskPath()
                                       : QStringLiteral("workspace ") + workspace;
    if (parser.isSet(viewOption))
        what += QStringLiteral(", view ") + parser.value(viewOption);
    if (!trace.isEmpty())
        what += QStringLiteral(", trace ") + trace;
    if (!counters.isEmpty())
        what += QStringLiteral(", counters ") + counters.join(QStringLiteral(" + "));
    if (const auto run = window.tuningView()->snapshot())
        what += QStringLiteral(", tuning run %1 (%2 steps)").arg(tuningRun).arg(run->steps.size());
    if (parser.isSet(fileOption)) {
        what += QStringLiteral(", file ") + window.candidateEditors()->currentFile();
        if (!window.candidateDiagnostics()->assemblyView()->shownText().isEmpty())
            what += QStringLiteral(" with its PTX");
    }
    if (const auto episodeShown = window.agentPanes()->agentPane()->shownEpisode())
        what += QStringLiteral(", episode %1 shown").arg(episodeShown->record.id);
    std::printf("screenshot: %s (%dx%d, %s)\n", qPrintable(QFileInfo(out).absoluteFilePath()),
                shown->width(), shown->height(), qPrintable(what));
    return 0;
}
