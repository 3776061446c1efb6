// The hand-edit loop on a real CPU workspace: Ctrl+S in the candidate editors saves the file and
// evaluates the workspace through the engine bridge (warm worker, quick timing), the result
// panel shows the verdict and reward, and a save during a run supersedes it. Every judged
// evaluation lands in the workspace's hand-edit history with the files it read; a cancelled one
// does not.
#include "agent/store/edit_history.h"
#include "engine/system/resource_paths.h"
#include "engine/workspace/workspace.h"
#include "widgets/core/app_settings.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/core/step_files.h"
#include "widgets/editors/candidate_editors.h"
#include "widgets/editors/code_editor.h"
#include "widgets/result/result_panel.h"
#include "widgets/window/edit_loop_controller.h"

#include <QAction>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace kwb;
using namespace kwb::ui;

namespace {

// Evaluations compile a torch extension on a 2-core machine shared with others: be generous.
constexpr int kEvaluationTimeoutMs = 280000;

QString readFile(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

} // namespace

class TestEditLoop : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(root_.isValid());
        // The histories these evaluations write stay in the test's folder.
        qputenv("KWB_STATE_DIR", root_.filePath("state").toUtf8());
        workspace_ = root_.filePath("ws");
        kwb::WorkspaceInitOptions options;
        options.solutionDirectory = kwb::bundledSolutionsDirectory() + "/01_gelu";
        const auto init = kwb::initWorkspace(kwb::bundledTasksDirectory() + "/01_gelu.py",
                                             workspace_.toStdString(), options);
        QVERIFY2(init.ok, init.error.c_str());
    }

    void cleanupTestCase() { root_.remove(); }

    void theTimeShownIsTheWaitWithTheEvaluatorsShareWhenLess() {
        QCOMPARE(EditLoopController::tookText(45.04, 23.71),
                 QStringLiteral("45.0 s, 23.7 s of it evaluating"));
        QCOMPARE(EditLoopController::tookText(10.2, 9.8), QStringLiteral("10.2 s"));
        QCOMPARE(EditLoopController::tookText(-1, 3.0), QStringLiteral("3.0 s"));
    }

    void editLoopOptionsMatchTheFastCli() {
        const kwb::EvaluationOptions o = EditLoopController::editLoopOptions();
        QVERIFY(o.warmWorker);
        QCOMPARE(o.checks, 3);
        QCOMPARE(o.maxRounds, 5);
        QCOMPARE(o.timingBudget.count(), 3);
        QCOMPARE(o.targetCv, 0.05);
        QVERIFY(o.device == kwb::DeviceChoice::Auto);
    }

    void ctrlSSavesAndTheResultPanelShowsTheEvaluation() {
        Fixture f(root_.filePath("s1.ini"), workspace_);
        QVERIFY(f.panel.showsEmptyState());
        QSignalSpy progress(&f.bridge, &EngineBridge::evaluationProgress);
        QSignalSpy shown(&f.loop, &EditLoopController::evaluationShown);
        QSignalSpy ready(&f.bridge, &EngineBridge::evaluationReady);
        QSignalSpy messages(&f.loop, &EditLoopController::message);
        std::shared_ptr<const kwb::EvaluationResult> result;
        connect(&f.bridge, &EngineBridge::evaluationReady, this,
                [&](quint64, auto delivered) { result = delivered; });

        CodeEditor* editor = f.editors.editorForFile("model_new.py");
        QVERIFY(editor);
        editor->append("\n# edited in the workbench\n");
        f.editors.show();
        editor->setFocus();
        QVERIFY(QTest::qWaitForWindowExposed(&f.editors));
        QTest::keyClick(editor, Qt::Key_S, Qt::ControlModifier); // the editors' Save action
        QVERIFY(readFile(workspace_ + "/model_new.py").contains("# edited in the workbench"));
        QVERIFY(f.loop.isEvaluating());
        QVERIFY(!f.loop.progressText().isEmpty());

        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, kEvaluationTimeoutMs);
        QVERIFY(!f.loop.isEvaluating());
        QVERIFY(f.loop.progressText().isEmpty());
        QCOMPARE(ready.count(), 1);
        QVERIFY(result);
        qInfo("verdict: %s (%.1f s, reward %d)", result->verdict().c_str(), result->totalSeconds,
              result->reward);
        QVERIFY2(result->failureKind.empty(), result->verdict().c_str());
        QVERIFY(result->correct);
        QVERIFY(result->cpuMode);
        QVERIFY(!f.panel.showsEmptyState());
        QCOMPARE(f.panel.verdictText(), QString::fromStdString(result->verdict()));
        QVERIFY(f.panel.verdictText().startsWith("correct"));
        QVERIFY(f.panel.rewardText().startsWith(QString::number(result->reward) + " "));
        QVERIFY(f.panel.titleText().startsWith("Evaluation 1 of"));
        QCOMPARE(f.panel.shownResult(), result);
        // The panel and the log give the same time: the wait from the save to the result.
        const QString logged = messages.last().at(0).toString();
        const QString took = logged.mid(logged.lastIndexOf('(') + 1).chopped(1);
        QVERIFY2(logged.startsWith("Evaluation: correct") && took.contains(" s"),
                 qPrintable(logged));
        QVERIFY2(f.panel.titleText().endsWith("(" + took + ")"), qPrintable(f.panel.titleText()));
        QVERIFY(took.section(' ', 0, 0).toDouble() >= result->totalSeconds - 0.05);
        // The stages were reported as they ran, in order.
        QStringList stages;
        for (const auto& call : progress)
            stages << call.at(1).toString();
        QVERIFY2(stages.contains("compile") && stages.contains("verify"),
                 qPrintable(stages.join(',')));
        QVERIFY(stages.indexOf("compile") < stages.indexOf("verify"));

        // Kept in the workspace's history with the text it judged, in the state folder.
        QTRY_VERIFY_WITH_TIMEOUT(f.loop.history() && !f.loop.history()->events.empty(), 10000);
        QVERIFY(f.loop.historyFile().startsWith(root_.filePath("state/edit-history/")));
        const auto history = f.loop.history();
        const auto& last = history->events.back();
        QCOMPARE(last->kind, kwb::agent::EventKind::Evaluation);
        QCOMPARE(last->payload["reward"].get<int>(), result->reward);
        const StepFiles judged = filesAfterStep(*history, last->sequence);
        QVERIFY(judged.files.count("model_new.py"));
        QVERIFY(judged.files.at("model_new.py").contains("# edited in the workbench"));
        QCOMPARE(evaluationsIn(*history), countedEvaluations());
    }

    void aSaveDuringARunSupersedesIt() {
        Fixture f(root_.filePath("s2.ini"), workspace_);
        QSignalSpy progress(&f.bridge, &EngineBridge::evaluationProgress);
        QSignalSpy shown(&f.loop, &EditLoopController::evaluationShown);
        QSignalSpy ready(&f.bridge, &EngineBridge::evaluationReady);
        CodeEditor* editor = f.editors.editorForFile("model_new.py");
        editor->append("# first save\n");
        QVERIFY(f.editors.saveCurrentFile());
        const quint64 first = f.bridge.latestEvaluationId();
        // Wait until the first evaluation runs, then save again.
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 60000);
        editor->append("# second save\n");
        QVERIFY(f.editors.saveCurrentFile());
        const quint64 second = f.bridge.latestEvaluationId();
        QVERIFY(second > first);

        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, kEvaluationTimeoutMs);
        QCOMPARE(shown.first().at(0).toULongLong(), second);
        QTRY_VERIFY_WITH_TIMEOUT(!f.bridge.isBusy(), 60000); // the first one has wound down
        QTest::qWait(200);
        // Only the newest result ever reached the UI.
        QCOMPARE(ready.count(), 1);
        QCOMPARE(shown.count(), 1);
        for (const auto& call : progress)
            QVERIFY(call.at(0).toULongLong() == first || call.at(0).toULongLong() == second);
        QVERIFY(f.panel.titleText().startsWith("Evaluation 1 of"));
        QVERIFY(f.panel.verdictText().startsWith("correct"));
    }

    // Cancel stops a running evaluation in its stage: the result comes back as cancelled and is
    // not shown as a verdict, and the next evaluation starts as usual.
    void cancelStopsARunningEvaluationAndTheNextOneRuns() {
        Fixture f(root_.filePath("s5.ini"), workspace_);
        const int evaluationsBefore = countedEvaluations();
        QSignalSpy progress(&f.bridge, &EngineBridge::evaluationProgress);
        QSignalSpy shown(&f.loop, &EditLoopController::evaluationShown);
        QSignalSpy messages(&f.loop, &EditLoopController::message);
        std::shared_ptr<const kwb::EvaluationResult> result;
        connect(&f.bridge, &EngineBridge::evaluationReady, this,
                [&](quint64, auto delivered) { result = delivered; });
        const quint64 id = f.loop.evaluateNow();
        QVERIFY(id != 0);
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 60000);
        const QString stage = progress.last().at(1).toString();
        QElapsedTimer cancelled;
        cancelled.start();
        f.loop.cancel();
        QCOMPARE(f.loop.progressText(), QStringLiteral("Cancelling…"));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
        qInfo("cancelled in %s after %lld ms", qPrintable(stage), cancelled.elapsed());
        QVERIFY(result);
        QCOMPARE(QString::fromStdString(result->failureKind), QStringLiteral("cancelled"));
        QVERIFY(!f.loop.isEvaluating());
        QVERIFY(f.loop.progressText().isEmpty());
        QCOMPARE(messages.last().at(0).toString(), QStringLiteral("Evaluation cancelled"));
        QVERIFY(f.panel.showsEmptyState()); // no verdict for what was not finished
        // Nothing was judged, so nothing new is in the history.
        QCOMPARE(countedEvaluations(), evaluationsBefore);
        // The next evaluation runs (it is cancelled too once it reports, to keep the test short).
        progress.clear();
        const quint64 next = f.loop.evaluateNow();
        QVERIFY(next > id);
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 60000);
        QCOMPARE(progress.last().at(0).toULongLong(), next);
        f.loop.cancel();
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 60000);
    }

    void verifyOnSaveOffOnlySaves() {
        Fixture f(root_.filePath("s3.ini"), workspace_);
        f.loop.verifyOnSaveAction()->setChecked(false);
        QVERIFY(!f.settings.verifyOnSave());
        // Opening the workspace read its hand-edit history; after that the bridge is idle.
        QTRY_VERIFY_WITH_TIMEOUT(!f.bridge.isBusy(), 10000);
        QSignalSpy saved(&f.editors, &CandidateEditors::fileSaved);
        f.editors.editorForFile("model_new.py")->append("# third\n");
        QVERIFY(f.editors.saveCurrentFile());
        QCOMPARE(saved.count(), 1);
        QVERIFY(!f.loop.isEvaluating());
        QVERIFY(!f.bridge.isBusy());
        QVERIFY(f.panel.showsEmptyState());
    }

    void readOnlyCandidatesRefuseToSave() {
        CandidateEditors editors(Theme::Dark);
        editors.showCandidate(QString::fromStdString(kwb::bundledSolutionsDirectory()) + "/01_gelu",
                              true, "bundled");
        QSignalSpy failed(&editors, &CandidateEditors::saveFailed);
        QString error;
        QVERIFY(!editors.saveCurrentFile(&error));
        QVERIFY(error.contains("read-only"));
        editors.saveAction()->trigger();
        QCOMPARE(failed.count(), 1);
    }

private:
    static int evaluationsIn(const kwb::agent::EpisodeSnapshot& history) {
        int n = 0;
        for (const auto& event : history.events)
            n += event->kind == kwb::agent::EventKind::Evaluation;
        return n;
    }
    // What the history holds now, read from its file.
    int countedEvaluations() const {
        const std::string file = kwb::agent::editHistoryFile(
            EditLoopController::historyFolder().toStdString(), workspace_.toStdString());
        return kwb::agent::readEditHistory(file, workspace_.toStdString()).evaluations;
    }

    struct Fixture {
        Fixture(const QString& ini, const QString& workspace)
            : settings(ini), editors(Theme::Dark), loop(bridge, settings, &editors, &panel) {
            kwb::EvaluationOptions options = EditLoopController::editLoopOptions();
            options.device = kwb::DeviceChoice::Cpu;
            loop.setOptions(options);
            loop.setWorkspace(workspace);
            editors.showCandidate(workspace, false, "workspace");
        }
        AppSettings settings;
        EngineBridge bridge;
        CandidateEditors editors;
        ResultPanel panel;
        EditLoopController loop;
    };

    QTemporaryDir root_;
    QString workspace_;
};

QTEST_MAIN(TestEditLoop)
#include "test_edit_loop.moc"
