// Opening traces in the GUI as a user does: File > Open Trace's path (MainWindow::openTrace),
// Recent Traces, a file dropped on the window, a file that is not a trace, and Cancel. And any
// file by what it holds (MainWindow::openFile: the command line's FILE, drops, File > Open
// File…): exported episodes open for replay without being imported.
#include "agent/store/episode_export.h"
#include "engine/system/resource_paths.h"
#include "engine/timeline/perfetto_export.h"
#include "engine/timeline/trace_file.h"
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/common/empty_state_pane.h"
#include "widgets/core/app_settings.h"
#include "widgets/timeline/timeline_pane.h"
#include "widgets/timeline/trace_loading_pane.h"
#include "widgets/window/main_window.h"
#include "widgets/window/trace_opener.h"

#include <QDockWidget>
#include <QDropEvent>
#include <QFile>
#include <QMenu>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <fstream>

using namespace kwb::ui;

namespace {

// A record file of `kernels` kernels on two streams, with header and end lines.
QString writeRecords(const QTemporaryDir& dir, const QString& name, int kernels) {
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.write(R"({"t":"header","format":"kwb-cupti/1","pid":1})"
               "\n"
               R"({"t":"device","id":0,"name":"Test GPU"})"
               "\n");
    for (int i = 0; i < kernels; ++i)
        file.write(QStringLiteral(R"({"t":"kernel","dev":0,"stream":%1,"start":%2,"end":%3,)"
                                  R"("grid":[8,1,1],"block":[128,1,1],"name":"kernel_%4"})"
                                  "\n")
                       .arg(i % 2 ? 13 : 7)
                       .arg(1000 + i * 100)
                       .arg(1050 + i * 100)
                       .arg(i % 3)
                       .toUtf8());
    file.write(R"({"t":"end","write_failures":0})"
               "\n");
    return path;
}

bool finishes(TraceOpener* opener, QSignalSpy& spy) {
    return spy.wait(60000) && opener->loadingPath().isEmpty();
}

} // namespace

class TestTraceOpening : public QObject {
    Q_OBJECT
private slots:
    void aRecordFileOpensInTheTimelineAndJoinsRecentTraces() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        window.show();
        const QString path = writeRecords(dir, "run.jsonl", 300);
        QSignalSpy finished(window.traceOpener(), &TraceOpener::finished);
        window.openTrace(path);
        QVERIFY(window.timelinePane()->showsLoading());
        QVERIFY(finishes(window.traceOpener(), finished));
        QCOMPARE(finished.first().at(1).toBool(), true);
        TimelinePane* pane = window.timelinePane();
        QVERIFY(!pane->showsEmptyState());
        QVERIFY(!pane->showsLoading());
        QVERIFY2(pane->statusText().contains("run.jsonl"), qPrintable(pane->statusText()));
        QVERIFY2(pane->statusText().contains("300 kernels"), qPrintable(pane->statusText()));
        QVERIFY(window.findChild<QDockWidget*>("dock.timeline")->isVisible());
        QCOMPARE(settings.recentTraces(), QStringList{path});
        QMenu* recent = window.traceOpener()->recentMenu();
        QCOMPARE(recent->actions().first()->text(), QString("run.jsonl"));

        // Recent Traces opens it again; a second file goes first in the list.
        const QString other = writeRecords(dir, "other.jsonl", 10);
        window.openTrace(other);
        QVERIFY(finishes(window.traceOpener(), finished));
        QCOMPARE(settings.recentTraces(), (QStringList{other, path}));
        recent->actions().at(1)->trigger();
        QVERIFY(finishes(window.traceOpener(), finished));
        QVERIFY(pane->statusText().contains("run.jsonl"));
        QCOMPARE(settings.recentTraces().first(), path);
    }

    void kwbsChromeExportOpensLikeItsRecords() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        const QString records = writeRecords(dir, "run.jsonl", 40);
        const auto loaded = kwb::timeline::loadTraceFile(records.toStdString());
        QVERIFY(loaded.timeline);
        const QString json = dir.filePath("run.json");
        QVERIFY(kwb::timeline::writePerfettoTraceFile(json.toStdString(), *loaded.timeline));
        QSignalSpy finished(window.traceOpener(), &TraceOpener::finished);
        window.openTrace(json);
        QVERIFY(finishes(window.traceOpener(), finished));
        QVERIFY2(window.timelinePane()->statusText().contains("40 kernels"),
                 qPrintable(window.timelinePane()->statusText()));
    }

    void aFileThatIsNotATraceSaysWhyAndTheNextOneOpens() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        const QString notes = dir.filePath("notes.txt");
        QFile file(notes);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("kernel timings, see the spreadsheet\n");
        file.close();
        QSignalSpy finished(window.traceOpener(), &TraceOpener::finished);
        window.openTrace(notes);
        QVERIFY(finishes(window.traceOpener(), finished));
        QCOMPARE(finished.last().at(1).toBool(), false);
        TimelinePane* pane = window.timelinePane();
        QVERIFY(pane->showsEmptyState());
        QVERIFY2(pane->emptyState()->title().contains("notes.txt"),
                 qPrintable(pane->emptyState()->title()));
        QVERIFY2(pane->emptyState()->explanation().contains("neither"),
                 qPrintable(pane->emptyState()->explanation()));
        QVERIFY2(settings.recentTraces().isEmpty(), "a failed file is not a recent trace");

        window.openTrace(writeRecords(dir, "good.jsonl", 5));
        QVERIFY(finishes(window.traceOpener(), finished));
        QVERIFY(!pane->showsEmptyState());
    }

    void aDroppedFileOpens() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        window.show();
        const QString path = writeRecords(dir, "dropped.jsonl", 20);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(path)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QApplication::sendEvent(&window, &enter);
        QVERIFY(enter.isAccepted());
        QSignalSpy finished(window.traceOpener(), &TraceOpener::finished);
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &drop);
        QVERIFY(finishes(window.traceOpener(), finished));
        QVERIFY(window.timelinePane()->statusText().contains("dropped.jsonl"));
    }

    void anyFileOpensWhereItBelongs() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        window.show();
        // Exported episodes: read without importing, the first shown for replay.
        kwb::agent::EpisodeTrajectory trajectory;
        trajectory.episode.id = 41;
        trajectory.episode.task = "01_gelu.py";
        trajectory.episode.model = "scripted";
        {
            std::ofstream out(dir.filePath("run.jsonl").toStdString());
            kwb::agent::writeExportLine(kwb::agent::toExportLine(trajectory), out);
            trajectory.episode.id = 42;
            kwb::agent::writeExportLine(kwb::agent::toExportLine(trajectory), out);
        }
        AgentPane* agent = window.agentPanes()->agentPane();
        QVERIFY(window.openFile(dir.filePath("run.jsonl")));
        QTRY_VERIFY_WITH_TIMEOUT(agent->shownEpisode(), 20000);
        QCOMPARE(agent->shownEpisode()->record.id, 41);
        QCOMPARE(window.context().episodeId, 41);

        // A broken export is refused whole and what was shown stays.
        QFile broken(dir.filePath("broken.jsonl"));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write(R"({"format":"kwb.episode","format_version":1,"episode":)"
                     "\n");
        broken.close();
        QVERIFY(window.openFile(broken.fileName()));
        QTRY_VERIFY_WITH_TIMEOUT(
            window.statusBar()->currentMessage().contains("Cannot open broken.jsonl"), 20000);
        QCOMPARE(agent->shownEpisode()->record.id, 41);

        // A task goes to the reference; a text file is refused with a reason.
        const QString task =
            QString::fromStdString(kwb::bundledTasksDirectory()) + "/03_softmax.py";
        QVERIFY(window.openFile(task));
        QCOMPARE(window.currentTaskPath(), task);
        QFile notes(dir.filePath("notes.txt"));
        QVERIFY(notes.open(QIODevice::WriteOnly));
        notes.write("kernel timings\n");
        notes.close();
        QVERIFY(!window.openFile(notes.fileName()));
    }

    void cancelStopsTheLoadAndKeepsWhatWasShown() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        window.show();
        QSignalSpy finished(window.traceOpener(), &TraceOpener::finished);
        window.openTrace(writeRecords(dir, "first.jsonl", 50));
        QVERIFY(finishes(window.traceOpener(), finished));
        TimelinePane* pane = window.timelinePane();
        const QString before = pane->statusText();

        // Cancel takes the pane back at once, however far the engine thread got.
        window.openTrace(writeRecords(dir, "second.jsonl", 50));
        QVERIFY(pane->showsLoading());
        QTest::mouseClick(pane->loadingPane()->cancelButton(), Qt::LeftButton);
        QCOMPARE(finished.size(), 2);
        QCOMPARE(finished.last().at(1).toBool(), false);
        QVERIFY(!pane->showsLoading());
        QCOMPARE(pane->statusText(), before);
        QCOMPARE(settings.recentTraces().size(), 1);
        // The dropped load's outcome, when it comes, changes nothing.
        QTest::qWait(300);
        QCOMPARE(pane->statusText(), before);
        QCOMPARE(finished.size(), 2);
    }

    void theLoadingPaneShowsBytesReadOfTheSize() {
        TraceLoadingPane loading;
        loading.start("big.jsonl");
        loading.setProgress(512 * 1024, 1024 * 1024);
        QCOMPARE(loading.permille(), 500);
        QVERIFY2(loading.text().contains("big.jsonl"), qPrintable(loading.text()));
        QVERIFY2(loading.text().contains("512"), qPrintable(loading.text()));
        loading.setProgress(5, 0); // a file that grew or an unknown size: no division by zero
        QCOMPARE(loading.permille(), 0);
    }
};

QTEST_MAIN(TestTraceOpening)
#include "test_trace_opening.moc"
