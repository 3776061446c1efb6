#include "agent/store/trajectory_store.h"
#include "engine/evaluation/evaluation_result.h"
#include "engine/system/resource_paths.h"
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/core/app_settings.h"
#include "widgets/editors/candidate_editors.h"
#include "widgets/editors/code_editor.h"
#include "widgets/models/run_list_model.h"
#include "widgets/models/task_list_model.h"
#include "widgets/result/result_panel.h"
#include "widgets/runs/rewards_pane.h"
#include "widgets/runs/runs_browser.h"
#include "widgets/timeline/timeline_pane.h"
#include "widgets/training/tuning_run_view.h"
#include "widgets/window/main_window.h"
#include "widgets/window/new_workspace_dialog.h"
#include "widgets/window/shortcuts_help.h"
#include "widgets/window/system_status_bar.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace kwb;
using namespace kwb::ui;

namespace {
QString bundledTask(const char* name) {
    return QString::fromStdString(kwb::bundledTasksDirectory()) + "/" + name;
}

QString readText(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

// Answers the next "Unsaved changes" question with `button` once it is up (it runs modal).
void answerUnsavedChangesBox(QMessageBox::StandardButton button) {
    auto* poll = new QTimer;
    QObject::connect(poll, &QTimer::timeout, poll, [poll, button] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (!box || box->objectName() != QLatin1String("unsavedChangesBox"))
            return;
        box->button(button)->click();
        poll->deleteLater();
    });
    poll->start(20);
}
} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void opensABundledTaskInTheReferencePane() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        window.show();
        const QString path = bundledTask("05_gemm_bias_relu.py");
        QVERIFY(window.openTask(path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(window.referenceEditor()->text(), QString::fromUtf8(file.readAll()));
        QVERIFY(window.referenceEditor()->isReadOnly());
        QCOMPARE(window.referenceEditor()->language(), SourceLanguage::Python);
        QCOMPARE(settings.lastTaskPath(), path);
        QVERIFY(window.windowTitle().contains("GEMM"));

        // The bundled solution opens in the candidate editors: model_new.py first, then kernels.
        const QStringList files = window.candidateEditors()->openFiles();
        QVERIFY(files.size() >= 3);
        QCOMPARE(files.first(), QString("model_new.py"));
        bool hasCu = false;
        for (const QString& f : files)
            if (f.startsWith("kernels/") && f.endsWith(".cu")) {
                hasCu = true;
                QCOMPARE(window.candidateEditors()->editorForFile(f)->language(),
                         SourceLanguage::Cuda);
            }
        QVERIFY(hasCu);
    }

    void listsTasksAndDetectsTheSystemOffTheUiThread() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        QVERIFY(!window.hasSystemReport()); // the constructor does not wait for detection
        // The list is read on the engine thread after detection (a torch import in a child):
        // under a loaded machine that is tens of seconds.
        QTRY_VERIFY_WITH_TIMEOUT(window.hasTaskList(), 60000);
        QVERIFY(window.taskListModel()->rowCount() >= 8);
        QTRY_VERIFY_WITH_TIMEOUT(window.hasSystemReport(), 60000);
        // This machine's task Python is what the status bar names.
        QVERIFY2(window.systemStatusBar()->pythonText().contains("torch"),
                 qPrintable(window.systemStatusBar()->pythonText()));
        QVERIFY(!window.systemStatusBar()->gpuText().isEmpty());
        // A tuning run needs a GPU: the Kernel Tuning pane offers Start only where there is one.
        QCOMPARE(window.tuningView()->startButton()->isEnabled(),
                 window.systemReport()->gpus.hasGpu());
    }

    void badTaskFileIsRejectedAndTheWindowStaysUsable() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        QFile junk(dir.filePath("junk.py"));
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write("print('not a task')\n");
        junk.close();
        QVERIFY(!window.openTask(junk.fileName()));
        QVERIFY(!window.openTask(dir.filePath("missing.py")));
        QVERIFY(window.currentTaskPath().isEmpty());
        QVERIFY(window.openTask(bundledTask("01_gelu.py")));
        QVERIFY(window.referenceEditor()->text().contains("class Model"));
    }

    void hasEveryPaneAsARearrangeableDock() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        QStringList names;
        for (QDockWidget* dock : window.docks()) {
            names << dock->objectName();
            QVERIFY(dock->features() & QDockWidget::DockWidgetMovable);
            QVERIFY(dock->widget() != nullptr);
        }
        for (const char* expected : {"dock.tasks", "dock.reference", "dock.agent", "dock.timeline",
                                     "dock.rewards", "dock.log", "dock.runs", "dock.counters"})
            QVERIFY2(names.contains(expected), expected);
    }

    // File > New Workspace from Task: both layouts are made and opened for editing; a folder in
    // use is refused and nothing in it is touched; the dialog says up front what CPU mode can do.
    void aWorkspaceIsCreatedFromATaskAndOpened() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        const QString gelu = QString::fromStdString(kwb::bundledTasksDirectory()) + "/01_gelu.py";
        NewWorkspaceDialog::Choice choice{gelu, dir.filePath("fast"), true, false};
        QVERIFY(window.createWorkspace(choice));
        QCOMPARE(QFileInfo(window.currentWorkspace()).canonicalFilePath(),
                 QFileInfo(dir.filePath("fast")).canonicalFilePath());
        QVERIFY(QFileInfo::exists(dir.filePath("fast/kernels")));
        QVERIFY(window.candidateEditors()->openFiles().contains("model_new.py"));
        // What a fast-path workspace cannot do on this machine is said above its files.
        QTRY_VERIFY_WITH_TIMEOUT(window.hasSystemReport(), 120000);
        const bool machineHasNoGpu = !window.systemReport()->gpus.hasGpu();
        QCOMPARE(window.candidateEditors()->bannerText().contains("No CUDA GPU here"),
                 machineHasNoGpu);

        choice = {gelu, dir.filePath("agent-layout"), false, true};
        QVERIFY(window.createWorkspace(choice));
        QVERIFY(QFile(dir.filePath("agent-layout/model_new.py")).open(QIODevice::ReadOnly));
        QVERIFY(!window.candidateEditors()->bannerText().contains("No CUDA GPU"));
        // From the bundled solution: its extension module, not the starter's TODO.
        QFile solution(dir.filePath("agent-layout/model_new.py"));
        QVERIFY(solution.open(QIODevice::ReadOnly));
        QVERIFY(solution.readAll().contains("cuda_extension"));

        // The same folder again: refused, and the window keeps what it had open.
        const QString before = window.currentWorkspace();
        QVERIFY(!window.createWorkspace(choice));
        QCOMPARE(window.currentWorkspace(), before);
        QVERIFY(
            !window.createWorkspace({dir.filePath("missing.py"), dir.filePath("x"), true, false}));

        // The dialog: CPU mode defaults to the layout that verifies on the CPU and says why.
        NewWorkspaceDialog noGpu(gelu, false);
        QVERIFY(!noGpu.choice().fastPath);
        QVERIFY(noGpu.choice().folder.endsWith("01_gelu") ||
                noGpu.choice().folder.contains("01_gelu-"));
        noGpu.setChoice({gelu, dir.filePath("y"), true, false});
        QVERIFY(noGpu.findChild<QLabel*>() != nullptr);
        bool saysNoGpu = false;
        for (QLabel* label : noGpu.findChildren<QLabel*>())
            saysNoGpu = saysNoGpu || label->text().contains("no CUDA GPU");
        QVERIFY(saysNoGpu);
        NewWorkspaceDialog withGpu(gelu, true);
        QVERIFY(withGpu.choice().fastPath);
    }

    void unsavedEditsAreMarkedAndNeverReplacedSilently() {
        QTemporaryDir dir;
        qputenv("KWB_STATE_DIR", dir.filePath("state").toUtf8());
        AppSettings settings(dir.filePath("s.ini"));
        settings.setVerifyOnSave(false); // saving here should not start an evaluation
        MainWindow window(settings);
        window.show();
        NewWorkspaceDialog::Choice choice{bundledTask("01_gelu.py"), dir.filePath("ws"), true,
                                          false};
        QVERIFY(window.createWorkspace(choice));
        CandidateEditors* editors = window.candidateEditors();
        CodeEditor* model = editors->editorForFile("model_new.py");
        QVERIFY(model);
        auto* tabs = editors->findChild<QTabWidget*>();
        QVERIFY(tabs);
        QVERIFY(editors->unsavedFiles().isEmpty());
        QCOMPARE(tabs->tabText(tabs->indexOf(model)), QStringLiteral("model_new.py"));

        model->append("# not saved yet\n");
        QCOMPARE(editors->unsavedFiles(), QStringList{"model_new.py"});
        QCOMPARE(tabs->tabText(tabs->indexOf(model)), QStringLiteral("model_new.py \u25CF"));
        QCOMPARE(editors->editorForFile("model_new.py"), model); // the mark is not in the name
        QCOMPARE(editors->openFiles().first(), QStringLiteral("model_new.py"));

        // Cancel keeps the edits and the workspace.
        answerUnsavedChangesBox(QMessageBox::Cancel);
        QVERIFY(!window.openTask(bundledTask("03_softmax.py")));
        QCOMPARE(editors->editorForFile("model_new.py"), model);
        QVERIFY(model->text().contains("# not saved yet"));
        // Save writes them, then the task opens.
        answerUnsavedChangesBox(QMessageBox::Save);
        QVERIFY(window.openTask(bundledTask("03_softmax.py")));
        QVERIFY(readText(dir.filePath("ws/model_new.py")).contains("# not saved yet"));

        // Discard drops them, and says so in the log.
        QVERIFY(window.openWorkspace(dir.filePath("ws")));
        model = window.candidateEditors()->editorForFile("model_new.py");
        model->append("# thrown away\n");
        answerUnsavedChangesBox(QMessageBox::Discard);
        QVERIFY(window.openTask(bundledTask("01_gelu.py")));
        QVERIFY(!readText(dir.filePath("ws/model_new.py")).contains("# thrown away"));
    }

    void fitsBothScreenSizesAndPanesKeepTheirSizeAsContentArrives() {
        // A 1366x768 laptop and a 1600x1000 desktop, less a title bar.
        for (const QSize size : {QSize(1366, 728), QSize(1600, 960)}) {
            QTemporaryDir dir;
            AppSettings settings(dir.filePath("s.ini"));
            MainWindow window(settings);
            window.resize(size);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QVERIFY(window.openTask(bundledTask("05_gemm_bias_relu.py")));
            QTRY_VERIFY_WITH_TIMEOUT(window.hasSystemReport() && window.hasTaskList(), 120000);
            QTest::qWait(50); // the default dock sizes are applied once shown
            const QSize minimum = window.minimumSizeHint();
            QVERIFY2(minimum.width() <= size.width() && minimum.height() <= size.height(),
                     qPrintable(QStringLiteral("minimum %1x%2 at %3x%4")
                                    .arg(minimum.width())
                                    .arg(minimum.height())
                                    .arg(size.width())
                                    .arg(size.height())));
            QCOMPARE(window.size(), size);
            // The editors keep a working share between the docks.
            QVERIFY2(window.candidateEditors()->width() >= size.width() * 3 / 10,
                     qPrintable(QString::number(window.candidateEditors()->width())));

            // The docks in view (one per tab group) and the editors between them. A tab raised
            // meanwhile (the compile diagnostics of the opened solution arriving late on a busy
            // machine raise Problems) takes its group's place, which is compared the same way.
            auto inView = [&window] {
                QMap<QString, QRect> shown;
                for (QDockWidget* dock : window.docks())
                    if (dock->isVisible() && !dock->visibleRegion().isEmpty())
                        shown[dock->objectName()] = dock->geometry();
                return shown;
            };
            const QMap<QString, QRect> before = inView();
            const QRect editorsBefore = window.candidateEditors()->geometry();
            QVERIFY2(before.size() >= 4, qPrintable(QStringList(before.keys()).join(", ")));
            // Content arrives: a failed evaluation with long texts, a long log line, a banner.
            auto result = std::make_shared<kwb::EvaluationResult>();
            result->failureKind = "compile_error";
            result->failureMessage = std::string(600, 'x') + " error: identifier undefined";
            result->reward = -1;
            window.resultPanel()->showEvaluation(result, nullptr,
                                                 QString(300, QChar('T')) + " evaluation");
            window.candidateEditors()->setBanner(QString(500, QChar('b')));
            QTest::qWait(50);
            QCOMPARE(window.size(), size);
            QCOMPARE(window.candidateEditors()->geometry(), editorsBefore);
            const QMap<QString, QRect> after = inView();
            for (auto it = before.cbegin(); it != before.cend(); ++it)
                if (after.contains(it.key()))
                    QVERIFY2(after[it.key()] == it.value(),
                             qPrintable(it.key() + " moved or resized"));
        }
    }

    void helpPageListsTheLiveShortcuts() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        const QList<ShortcutEntry> entries = collectShortcuts(&window);
        auto has = [&](const QString& keys, const QString& actionPart) {
            for (const ShortcutEntry& e : entries)
                if (e.keys == keys && e.action.contains(actionPart, Qt::CaseInsensitive))
                    return true;
            return false;
        };
        QVERIFY2(has(QKeySequence(QKeySequence::Save).toString(QKeySequence::NativeText), "Save"),
                 "Ctrl+S (save and verify) is listed");
        QVERIFY2(has("F5", "Evaluate"), "F5 evaluates the workspace");
        QVERIFY2(has("Ctrl+Shift+P", "Pause"), "the agent's pause shortcut is listed");
        // No duplicates, and every entry says where it lives.
        for (int i = 0; i < entries.size(); ++i) {
            QVERIFY(!entries[i].context.isEmpty());
            for (int j = i + 1; j < entries.size(); ++j)
                QVERIFY(!(entries[i].keys == entries[j].keys &&
                          entries[i].action == entries[j].action &&
                          entries[i].context == entries[j].context));
        }
        ShortcutsDialog dialog(entries, TimelinePane::keyHelp(), &window);
        auto* table = dialog.findChild<QAbstractItemView*>("shortcutsTable");
        QVERIFY(table);
        QCOMPARE(table->model()->rowCount(), entries.size());
        QVERIFY(dialog.findChild<QLabel*>("shortcutsExtra")->text().contains("WASD") ||
                dialog.findChild<QLabel*>("shortcutsExtra")->text().contains("W / S"));
    }

    void timelineDockHoldsTheTimelinePaneInItsEmptyState() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        QCOMPARE(window.findChild<QDockWidget*>("dock.timeline")->widget(),
                 static_cast<QWidget*>(window.timelinePane()));
        QVERIFY(window.timelinePane()->showsEmptyState());
    }

    void agentRewardsAndRunsDocksShowTheDefaultStore() {
        QTemporaryDir dir;
        // The state folder holds the store `kwb agent` writes; the GUI lists the same file.
        qputenv("KWB_STATE_DIR", dir.filePath("state").toUtf8());
        QVERIFY(QDir().mkpath(dir.filePath("state")));
        {
            auto store = kwb::agent::TrajectoryStore::open(
                dir.filePath("state/trajectories.db").toStdString());
            QVERIFY(store);
            kwb::agent::EpisodeRecord record;
            record.task = "01_gelu.py";
            record.model = "test-model"; // a one-letter literal here set off GCC 12's -Wrestrict
                                         // false positive
            QVERIFY(store.value()->createEpisode(record));
        }
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        qunsetenv("KWB_STATE_DIR");
        AgentPanes* panes = window.agentPanes();
        QCOMPARE(window.findChild<QDockWidget*>("dock.agent")->widget(),
                 static_cast<QWidget*>(panes->agentPane()));
        QCOMPARE(window.findChild<QDockWidget*>("dock.rewards")->widget(),
                 static_cast<QWidget*>(panes->rewardsPane()));
        QCOMPARE(window.findChild<QDockWidget*>("dock.runs")->widget(),
                 static_cast<QWidget*>(panes->runsBrowser()));
        QTRY_VERIFY_WITH_TIMEOUT(panes->hasEpisodeList(), 30000);
        QCOMPARE(panes->runListModel()->rowCount(), 1);
        QVERIFY(window.openTask(bundledTask("01_gelu.py")));
        QCOMPARE(QString::fromStdString(panes->agentPane()->startRequest().taskPath),
                 window.currentTaskPath());
    }

    void dockLayoutIsSavedAndRestored() {
        QTemporaryDir dir;
        const QString file = dir.filePath("s.ini");
        {
            AppSettings settings(file);
            MainWindow window(settings);
            window.show();
            QDockWidget* agent = window.findChild<QDockWidget*>("dock.agent");
            QVERIFY(agent);
            window.addDockWidget(Qt::LeftDockWidgetArea, agent);
            window.findChild<QDockWidget*>("dock.rewards")->hide();
            window.close(); // closeEvent saves the layout
        }
        AppSettings settings(file);
        QVERIFY(!settings.windowState().isEmpty());
        MainWindow restored(settings);
        restored.show();
        QCOMPARE(restored.dockWidgetArea(restored.findChild<QDockWidget*>("dock.agent")),
                 Qt::LeftDockWidgetArea);
        QVERIFY(restored.findChild<QDockWidget*>("dock.rewards")->isHidden());
        restored.resetLayout();
        QCOMPARE(restored.dockWidgetArea(restored.findChild<QDockWidget*>("dock.agent")),
                 Qt::RightDockWidgetArea);
        QVERIFY(!restored.findChild<QDockWidget*>("dock.rewards")->isHidden());
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
