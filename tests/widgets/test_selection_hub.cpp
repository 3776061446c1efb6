// Linked selection: the hub broadcasts one selection, ignores echoes (no loops), and in the main
// window a reward point selects the step in the agent pane, shows that step's evaluation in the
// result panel and its files (rebuilt from the recorded texts) and diffs in the editors; a
// timeline kernel selects its statistics row. The current context: which task, workspace or
// episode the panes follow, following a live agent until the user picks a step, and a
// workspace's hand-edit history in the rewards plot and the compare views.
#include "agent/store/edit_history.h"
#include "agent/store/trajectory_store.h"
#include "engine/system/resource_paths.h"
#include "engine/workspace/workspace.h"
#include "episode_fixtures.h"
#include "tests/timeline/timeline_fixture.h"
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/core/agent_session_controller.h"
#include "widgets/core/app_settings.h"
#include "widgets/core/selection_hub.h"
#include "widgets/core/step_files.h"
#include "widgets/core/step_inspection.h"
#include "widgets/diff/diff_view.h"
#include "widgets/editors/candidate_editors.h"
#include "widgets/editors/code_editor.h"
#include "widgets/models/conversation_model.h"
#include "widgets/models/diff_model.h"
#include "widgets/models/kernel_statistics_model.h"
#include "widgets/result/result_panel.h"
#include "widgets/runs/reward_plot.h"
#include "widgets/runs/rewards_pane.h"
#include "widgets/timeline/timeline_pane.h"
#include "widgets/window/edit_loop_controller.h"
#include "widgets/window/main_window.h"

#include <QAction>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QListView>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace kwb;
using namespace kwb::ui;
using namespace kwb::ui::test;
using kwb::agent::EventKind;

namespace {

// Episode 7: message (1), diff of kernels/a.cu (2), evaluation (3, reward 1), diff (4),
// diff of model_new.py (5), evaluation (6, reward 3).
agent::EpisodeSnapshotPtr episodeWithDiffs() {
    kwb::agent::EpisodeTrajectory t;
    t.episode.id = 7;
    t.episode.task = "tasks/level1/01_gelu.py";
    t.episode.status = kwb::agent::EpisodeStatus::Finished;
    t.events = {event(7, 1, EventKind::AssistantMessage, assistant("first try")),
                event(7, 2, EventKind::FileDiff, {{"path", "kernels/a.cu"}, {"diff", "+v1"}}),
                event(7, 3, EventKind::Evaluation, evaluationPayload(1, 1.2, 0.9)),
                event(7, 4, EventKind::FileDiff, {{"path", "kernels/a.cu"}, {"diff", "+v2"}}),
                event(7, 5, EventKind::FileDiff, {{"path", "model_new.py"}, {"diff", "+call"}}),
                event(7, 6, EventKind::Evaluation, evaluationPayload(3, 1.8, 1.3))};
    t.episode.lastSequence = 6;
    return agent::makeEpisodeSnapshot(std::move(t));
}

// An evaluation that recorded a CUPTI timeline (a record file checked into tests/data).
nlohmann::json evaluationWithTimeline(int reward, double vsEager, double vsCompile) {
    nlohmann::json payload = evaluationPayload(reward, vsEager, vsCompile);
    payload["timeline_records"] = std::string(KWB_TEST_DATA_DIR) + "/timeline/two_streams.jsonl";
    return payload;
}

// Episode 8, recorded with whole texts: the initial files (1, 2), a kernel edit (3), an
// evaluation (4, reward 1), a model_new.py edit (5), a new helper header (6), an evaluation
// (7, reward 3), a deleted header (8).
agent::EpisodeSnapshotPtr episodeWithFiles() {
    auto change = [](const char* path, nlohmann::json before, nlohmann::json after,
                     bool initial = false) {
        nlohmann::json p = {{"path", path}, {"before", before}, {"after", after}, {"diff", "…"}};
        if (initial)
            p["initial"] = true;
        return p;
    };
    kwb::agent::EpisodeTrajectory t;
    t.episode.id = 8;
    t.episode.task = "tasks/level1/01_gelu.py";
    t.episode.status = kwb::agent::EpisodeStatus::Finished;
    t.events = {
        event(8, 1, EventKind::FileDiff, change("model_new.py", nullptr, "v1 model\n", true)),
        event(8, 2, EventKind::FileDiff, change("kernels/a.cu", nullptr, "kernel v1\n", true)),
        event(8, 3, EventKind::FileDiff, change("kernels/a.cu", "kernel v1\n", "kernel v2\n")),
        event(8, 4, EventKind::Evaluation, evaluationPayload(1, 1.2, 0.9)),
        event(8, 5, EventKind::FileDiff, change("model_new.py", "v1 model\n", "v2 model\n")),
        event(8, 6, EventKind::FileDiff, change("kernels/b.cuh", nullptr, "helper\n")),
        event(8, 7, EventKind::Evaluation, evaluationWithTimeline(3, 1.8, 1.3)),
        event(8, 8, EventKind::FileDiff, change("kernels/b.cuh", "helper\n", nullptr)),
        // A hostile or broken store must not make the workbench write outside its folder.
        event(8, 9, EventKind::FileDiff, change("../escape.txt", nullptr, "no\n"))};
    t.episode.lastSequence = 9;
    return agent::makeEpisodeSnapshot(std::move(t));
}

// A fast-path workspace of the bundled GELU task.
QString makeWorkspace(const QString& folder) {
    kwb::WorkspaceInitOptions options;
    options.solutionDirectory = kwb::bundledSolutionsDirectory() + "/01_gelu";
    const auto init = kwb::initWorkspace(kwb::bundledTasksDirectory() + "/01_gelu.py",
                                         folder.toStdString(), options);
    return init.ok ? folder : QString();
}

} // namespace

class TestSelectionHub : public QObject {
    Q_OBJECT
private slots:
    void broadcastsOnceAndIgnoresEchoes() {
        SelectionHub hub;
        QSignalSpy steps(&hub, &SelectionHub::stepSelected);
        QSignalSpy kernels(&hub, &SelectionHub::kernelSelected);
        QSignalSpy evaluations(&hub, &SelectionHub::evaluationSelected);
        // A pane that selects what it is told, and reports its new selection back.
        int paneHeard = 0;
        connect(&hub, &SelectionHub::stepSelected, this, [&](qint64 episode, qint64 step) {
            ++paneHeard;
            hub.selectStep(episode, step);
        });
        connect(&hub, &SelectionHub::kernelSelected, this,
                [&](const QString& name, qint64 a, qint64 b) { hub.selectKernel(name, a, b); });
        hub.selectStep(3, 9);
        QCOMPARE(steps.count(), 1);
        QCOMPARE(paneHeard, 1);
        QCOMPARE(steps.first().at(0).toLongLong(), 3);
        QCOMPARE(steps.first().at(1).toLongLong(), 9);
        hub.selectStep(3, 9); // the same again: nothing to tell
        QCOMPARE(steps.count(), 1);
        hub.selectStep(3, 10);
        QCOMPARE(steps.count(), 2);
        QCOMPARE(hub.step(), 10);

        hub.selectKernel("gelu_kernel", 100, 200);
        hub.selectKernel("gelu_kernel", 100, 200);
        QCOMPARE(kernels.count(), 1);
        hub.selectKernel("gelu_kernel", 300, 400); // another launch of the same kernel
        QCOMPARE(kernels.count(), 2);
        QCOMPARE(hub.kernelStartNs(), 300);

        hub.selectEvaluation(5);
        hub.selectEvaluation(5);
        QCOMPARE(evaluations.count(), 1);
        hub.clear();
        hub.selectEvaluation(5); // after clear, the same id is news again
        QCOMPARE(evaluations.count(), 2);
    }

    void inspectsAStepsEvaluationAndDiffs() {
        const auto episode = episodeWithDiffs();
        const StepInspection evaluation = inspectStep(*episode, 6);
        QVERIFY(evaluation.found);
        QVERIFY(evaluation.evaluation);
        QCOMPARE(evaluation.evaluation->reward, 3);
        QVERIFY(evaluation.previousEvaluation);
        QCOMPARE(evaluation.previousEvaluation->reward, 1);
        QCOMPARE(evaluation.changedFiles, 2); // steps 4 and 5, not step 2
        QVERIFY(evaluation.changes.contains("+v2") && evaluation.changes.contains("+call"));
        QVERIFY(!evaluation.changes.contains("+v1"));

        const StepInspection diff = inspectStep(*episode, 2);
        QVERIFY(!diff.evaluation);
        QCOMPARE(diff.changedFiles, 1);
        QVERIFY(diff.changes.contains("kernels/a.cu") && diff.changes.contains("+v1"));
        QVERIFY(!inspectStep(*episode, 99).found);
    }

    void aRewardPointSelectsTheStepInEveryPane() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        window.show();
        AgentPane* agent = window.agentPanes()->agentPane();
        agent->showEpisode(episodeWithDiffs());
        SelectionHub* hub = window.selectionHub();
        QSignalSpy steps(hub, &SelectionHub::stepSelected);

        // The rewards pane forwards its plot's click; emit it as the plot would.
        emit window.agentPanes()->rewardsPane()->stepSelected(7, 6);
        QCOMPARE(hub->episodeId(), 7);
        QCOMPARE(hub->step(), 6);
        // The agent pane selected the row and echoed it back; the hub did not re-broadcast.
        QCOMPARE(steps.count(), 1);
        const QModelIndex current = agent->conversationView()->currentIndex();
        QVERIFY(current.isValid());
        QCOMPARE(current.data(ConversationModel::SequenceRole).toLongLong(), 6);
        // The result panel shows the step's stored evaluation, compared with step 3's.
        ResultPanel* result = window.resultPanel();
        QCOMPARE(result->titleText(), QStringLiteral("Episode 7, step 6"));
        QVERIFY(result->rewardText().startsWith("3 "));
        QVERIFY2(result->comparisonText().contains("reward +2"),
                 qPrintable(result->comparisonText()));
        // The editors show the diffs that led to it, and say why not the files.
        CandidateEditors* editors = window.candidateEditors();
        QVERIFY(editors->stepChangesTab() >= 0);
        CodeEditor* changes = editors->editorForFile(QStringLiteral("Step 6 changes"));
        QVERIFY(changes);
        QVERIFY(changes->text().contains("+call"));
        QVERIFY(changes->text().contains("records only diffs per step, not the files"));

        // Selecting a row in the conversation goes the other way.
        const int row = agent->conversationModel()->rowForSequence(3);
        QVERIFY(row >= 0);
        agent->conversationView()->setCurrentIndex(agent->conversationModel()->index(row));
        QCOMPARE(hub->step(), 3);
        QCOMPARE(steps.count(), 2);
        QCOMPARE(result->titleText(), QStringLiteral("Episode 7, step 3"));
        QVERIFY(result->comparisonText().contains("no earlier evaluation"));
    }

    void rebuildsTheFilesOfAnyStep() {
        const auto episode = episodeWithFiles();
        const StepFiles atFirstEvaluation = filesAfterStep(*episode, 4);
        QVERIFY(atFirstEvaluation.complete);
        QCOMPARE(atFirstEvaluation.files.size(), std::size_t{2});
        QCOMPARE(atFirstEvaluation.files.at("kernels/a.cu"), QStringLiteral("kernel v2\n"));
        QCOMPARE(atFirstEvaluation.files.at("model_new.py"), QStringLiteral("v1 model\n"));
        const StepFiles atSecond = filesAfterStep(*episode, 7);
        QCOMPARE(atSecond.files.at("model_new.py"), QStringLiteral("v2 model\n"));
        QCOMPARE(atSecond.files.count("kernels/b.cuh"), std::size_t{1});
        QCOMPARE(filesAfterStep(*episode, 8).files.count("kernels/b.cuh"), std::size_t{0});
        // Episodes stored with diffs only cannot be rebuilt, and say so.
        QVERIFY(!filesAfterStep(*episodeWithDiffs(), 6).complete);

        const auto choices = comparableSteps(*episode, 7);
        QCOMPARE(choices.size(), std::size_t{2}); // step 4, then the start
        QCOMPARE(choices[0].sequence, 4);
        QVERIFY(choices[0].label.contains("reward 1"));
        QCOMPARE(choices[1].sequence, 0);

        const auto [left, right] = joinedDifferences(atFirstEvaluation, atSecond);
        QVERIFY(left.contains("=== model_new.py") && left.contains("v1 model"));
        QVERIFY(right.contains("v2 model") && right.contains("=== kernels/b.cuh"));
        QVERIFY(left.contains("kernels/b.cuh (not there yet)"));
        QVERIFY(!left.contains("kernel v2") && !right.contains("kernel v2")); // unchanged file

        QTemporaryDir dir;
        const QString folder = dir.filePath("step");
        QVERIFY(writeStepFiles(filesAfterStep(*episode, 9), folder));
        QVERIFY(QFile::exists(folder + "/kernels/a.cu"));
        QVERIFY(!QFile::exists(dir.filePath("escape.txt")));
        QVERIFY(!QFile::exists(folder + "/../escape.txt"));
    }

    void aStepShowsItsFilesAndDiffsAgainstAnEarlierEvaluation() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        window.show();
        window.agentPanes()->agentPane()->showEpisode(episodeWithFiles());
        emit window.agentPanes()->rewardsPane()->stepSelected(8, 7);
        QCOMPARE(window.shownStep(), 7);
        CandidateEditors* editors = window.candidateEditors();
        QVERIFY(editors->isReadOnly());
        CodeEditor* model = editors->editorForFile(QStringLiteral("model_new.py"));
        QVERIFY(model);
        QCOMPARE(model->text(), QStringLiteral("v2 model\n"));
        QVERIFY(editors->editorForFile(QStringLiteral("kernels/b.cuh")));
        CodeEditor* changes = editors->editorForFile(QStringLiteral("Step 7 changes"));
        QVERIFY(changes);
        QVERIFY(changes->text().contains("files after this step"));
        // And the timeline its evaluation recorded, read off the UI thread.
        TimelinePane* timeline = window.timelinePane();
        QTRY_VERIFY_WITH_TIMEOUT(!timeline->showsEmptyState(), 10000);
        QVERIFY(timeline->statisticsModel()->rowCount() > 0);
        // Its dock says whose timeline it is.
        QTRY_COMPARE_WITH_TIMEOUT(window.findChild<QDockWidget*>("dock.timeline")->windowTitle(),
                                  QStringLiteral("Timeline — Episode 8, step 7"), 10000);

        QDialog* diff = window.compareShownStepWith(4);
        QVERIFY(diff);
        auto* view = diff->findChild<DiffView*>();
        QVERIFY(view);
        QVERIFY2(view->titleText().contains("step 4 -> step 7"), qPrintable(view->titleText()));
        // model_new.py v1 -> v2 and the new header; the unchanged kernel is left out.
        const DiffStats stats = view->model()->stats();
        QCOMPARE(stats.added, 3);   // the header's title line, "helper", "v2 model"
        QCOMPARE(stats.removed, 2); // the header's "(not there yet)" title line, "v1 model"
        diff->close();
        QVERIFY(window.compareShownStepWith(0));  // the episode's start
        QVERIFY(!window.compareShownStepWith(9)); // not earlier than the shown step

        window.backToWorkspace();
        QCOMPARE(window.shownStep(), -1);
        QVERIFY(!editors->editorForFile(QStringLiteral("kernels/b.cuh")));
    }

    void aStoredEpisodeShowsItsStepsFilesRewardsAndTimeline() {
        // End to end from the store on disk: the window reads the default store of its state
        // folder, opens the episode off the UI thread, and a reward point brings the step's
        // evaluation, files and timeline into their panes.
        QTemporaryDir dir;
        const QString state = dir.filePath(QStringLiteral("state"));
        QVERIFY(QDir().mkpath(state));
        qputenv("KWB_STATE_DIR", state.toUtf8());
        kwb::agent::EpisodeId id = 0;
        {
            auto store = kwb::agent::TrajectoryStore::open(
                (state + QStringLiteral("/trajectories.db")).toStdString());
            QVERIFY(store);
            kwb::agent::EpisodeRecord record;
            record.task = "tasks/level1/01_gelu.py";
            record.provider = "scripted";
            record.model = "m";
            id = store.value()->createEpisode(record).value().id;
            const agent::EpisodeSnapshotPtr recorded = episodeWithFiles();
            for (const auto& e : recorded->events)
                QVERIFY(store.value()->appendEvent(id, e->kind, e->payload));
            kwb::agent::EpisodeOutcome outcome;
            outcome.reward = 3;
            QVERIFY(store.value()->finishEpisode(id, outcome));
        }
        AppSettings settings(dir.filePath(QStringLiteral("s.ini")));
        MainWindow window(settings);
        qunsetenv("KWB_STATE_DIR");
        window.show();
        AgentPane* agent = window.agentPanes()->agentPane();
        window.agentPanes()->openEpisode(id);
        QTRY_VERIFY_WITH_TIMEOUT(agent->shownEpisode() != nullptr, 30000);
        QVERIFY(agent->conversationModel()->rowForSequence(7) >= 0); // the evaluation step
        RewardsPane* rewards = window.agentPanes()->rewardsPane();
        QCOMPARE(rewards->rewardPlot()->pointCount(), 2);

        emit rewards->stepSelected(id, 7);
        QCOMPARE(window.resultPanel()->titleText(), QStringLiteral("Episode %1, step 7").arg(id));
        CodeEditor* model =
            window.candidateEditors()->editorForFile(QStringLiteral("model_new.py"));
        QVERIFY(model);
        QCOMPARE(model->text(), QStringLiteral("v2 model\n"));
        QTRY_VERIFY_WITH_TIMEOUT(!window.timelinePane()->showsEmptyState(), 10000);
    }

    void theContextFollowsTheTaskTheWorkspaceAndTheEpisodeOpened() {
        QTemporaryDir dir;
        qputenv("KWB_STATE_DIR", dir.filePath("state").toUtf8());
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        window.show();
        auto* referenceDock = window.findChild<QDockWidget*>("dock.reference");
        const QString task = QString::fromStdString(kwb::bundledTasksDirectory()) + "/01_gelu.py";
        QVERIFY(window.openTask(task));
        QCOMPARE(window.context().kind, WorkbenchContext::Kind::Task);
        QCOMPARE(window.contextText(), QStringLiteral("Task 01_gelu.py"));

        const QString workspace = makeWorkspace(dir.filePath("ws"));
        QVERIFY(window.openWorkspace(workspace));
        QCOMPARE(window.context().kind, WorkbenchContext::Kind::Workspace);
        QVERIFY2(window.contextText().contains("Workspace ws"), qPrintable(window.contextText()));
        // An agent started now works on the workspace's task, not the task opened before.
        QCOMPARE(window.agentPanes()->agentPane()->taskPath(),
                 QDir(workspace).filePath("model.py"));
        RewardsPane* rewards = window.agentPanes()->rewardsPane();
        // No history yet: the rewards pane says how one starts.
        QTRY_VERIFY_WITH_TIMEOUT(rewards->headline().contains("no evaluations yet"), 10000);

        // A stored episode becomes the context: the reference shows its task, or says it is
        // not on this machine (this one names a relative path that does not exist here).
        window.agentPanes()->agentPane()->showEpisode(episodeWithFiles());
        QCOMPARE(window.context().kind, WorkbenchContext::Kind::Episode);
        QCOMPARE(window.context().episodeId, 8);
        QVERIFY(!window.context().live);
        QCOMPARE(window.contextText(), QStringLiteral("Episode 8"));
        QVERIFY(window.referenceEditor()->text().contains("not a file on this machine"));
        QVERIFY(referenceDock->windowTitle().contains("episode 8"));
        QCOMPARE(rewards->rewardPlot()->pointCount(), 2);
        // Its task file, when it is here, is what the reference shows.
        kwb::agent::EpisodeTrajectory onTask;
        onTask.episode.id = 9;
        onTask.episode.task = task.toStdString();
        onTask.episode.status = kwb::agent::EpisodeStatus::Finished;
        window.agentPanes()->agentPane()->showEpisode(agent::makeEpisodeSnapshot(onTask));
        QCOMPARE(window.context().episodeId, 9);
        QVERIFY(window.referenceEditor()->text().contains("class Model"));
        QVERIFY(referenceDock->windowTitle().contains("01_gelu.py (episode 9's task)"));

        // Back to the task: the rewards pane no longer claims an episode.
        QVERIFY(window.openTask(task));
        QVERIFY(rewards->headline().contains("No episode shown"));
    }

    void aLiveEpisodeIsFollowedUntilTheUserPicksAStep() {
        QTemporaryDir dir;
        qputenv("KWB_STATE_DIR", dir.filePath("state").toUtf8());
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        window.show();
        AgentSessionController* controller = window.agentPanes()->controller();
        CandidateEditors* editors = window.candidateEditors();
        ResultPanel* result = window.resultPanel();
        QAction* follow = window.followAgentAction();
        QVERIFY(!follow->isEnabled());
        const auto full = episodeWithFiles();

        // The session the user starts becomes the context, followed step by step.
        emit controller->sessionStarted();
        emit controller->episodeUpdated(agent::truncatedTo(full, 3)); // start files, kernel v2
        QCOMPARE(window.context().kind, WorkbenchContext::Kind::Episode);
        QCOMPARE(window.context().episodeId, 8);
        QVERIFY(window.context().following);
        QVERIFY(follow->isEnabled() && follow->isChecked());
        QVERIFY2(window.contextText().contains("following the agent"),
                 qPrintable(window.contextText()));
        QVERIFY(editors->bannerText().startsWith("Following the agent"));
        QVERIFY(editors->isReadOnly());
        QCOMPARE(editors->editorForFile("kernels/a.cu")->text(), QStringLiteral("kernel v2\n"));
        emit controller->episodeUpdated(agent::truncatedTo(full, 4)); // its first evaluation
        QCOMPARE(result->titleText(), QStringLiteral("Episode 8, step 4 (live)"));
        // The tab the user reads stays the current one while its text changes under it.
        QVERIFY(editors->jumpTo("model_new.py", 1, 0));
        emit controller->episodeUpdated(agent::truncatedTo(full, 6)); // model v2, a header
        QCOMPARE(editors->currentFile(), QStringLiteral("model_new.py"));
        QCOMPARE(editors->editorForFile("model_new.py")->text(), QStringLiteral("v2 model\n"));
        QVERIFY(editors->editorForFile("kernels/b.cuh"));

        // The user picks the first evaluation: the workbench stays there.
        emit window.agentPanes()->rewardsPane()->stepSelected(8, 4);
        QVERIFY(!window.context().following);
        QCOMPARE(window.context().step, 4);
        QVERIFY(!follow->isChecked());
        QCOMPARE(editors->editorForFile("model_new.py")->text(), QStringLiteral("v1 model\n"));
        emit controller->episodeUpdated(agent::truncatedTo(full, 8)); // evaluation 7, header gone
        QCOMPARE(editors->editorForFile("model_new.py")->text(), QStringLiteral("v1 model\n"));
        QCOMPARE(result->titleText(), QStringLiteral("Episode 8, step 4"));
        // The plot still grows: the episode is still the context.
        QCOMPARE(window.agentPanes()->rewardsPane()->rewardPlot()->pointCount(), 2);

        // Following again jumps to the newest state.
        follow->trigger();
        QVERIFY(window.context().following);
        QCOMPARE(editors->editorForFile("model_new.py")->text(), QStringLiteral("v2 model\n"));
        QVERIFY(!editors->editorForFile("kernels/b.cuh"));
        QCOMPARE(result->titleText(), QStringLiteral("Episode 8, step 7 (live)"));

        // Opening a workspace leaves the agent: its steps no longer move the other panes.
        const QString workspace = makeWorkspace(dir.filePath("ws"));
        QVERIFY(window.openWorkspace(workspace));
        QVERIFY(!follow->isEnabled());
        emit controller->episodeUpdated(full);
        QVERIFY(!editors->isReadOnly());
        QCOMPARE(QFileInfo(editors->directory()).canonicalFilePath(),
                 QFileInfo(workspace).canonicalFilePath());
        QCOMPARE(window.context().kind, WorkbenchContext::Kind::Workspace);
        // The agent pane itself still shows the live episode.
        QCOMPARE(window.agentPanes()->agentPane()->shownEpisode()->events.size(),
                 full->events.size());
    }

    void aWorkspacesHandEditHistoryIsPlottedAndEachEvaluationOpens() {
        QTemporaryDir dir;
        qputenv("KWB_STATE_DIR", dir.filePath("state").toUtf8());
        const QString workspace = makeWorkspace(dir.filePath("ws"));
        const std::string file = agent::editHistoryFile(
            EditLoopController::historyFolder().toStdString(), workspace.toStdString());
        const std::string ws = workspace.toStdString();
        QVERIFY(agent::appendEditHistory(file, ws, {{"model_new.py", "first\n"}},
                                         evaluationPayload(-1, 0, 0), "t1"));
        QVERIFY(agent::appendEditHistory(file, ws, {{"model_new.py", "second\n"}},
                                         evaluationPayload(1, 1.1, 0.8), "t2"));
        QVERIFY(agent::appendEditHistory(
            file, ws, {{"model_new.py", "third\n"}, {"kernels/k.cu", "kernel\n"}},
            evaluationPayload(3, 1.9, 1.2), "t3"));

        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        window.show();
        QVERIFY(window.openWorkspace(workspace));
        RewardsPane* rewards = window.agentPanes()->rewardsPane();
        QTRY_COMPARE_WITH_TIMEOUT(rewards->rewardPlot()->pointCount(), 3, 10000);
        QVERIFY2(rewards->headline().contains("Hand edits of"), qPrintable(rewards->headline()));
        const auto history = window.editLoop()->history();
        QVERIFY(history);
        std::vector<qint64> evaluations;
        for (const auto& event : history->events)
            if (event->kind == EventKind::Evaluation)
                evaluations.push_back(event->sequence);
        QCOMPARE(evaluations.size(), std::size_t{3});

        // A point opens that evaluation: its files (read-only) and its result.
        emit rewards->stepSelected(agent::kEditHistoryEpisodeId, evaluations[1]);
        CandidateEditors* editors = window.candidateEditors();
        QCOMPARE(window.shownStep(), evaluations[1]);
        QVERIFY(editors->isReadOnly());
        QCOMPARE(editors->editorForFile("model_new.py")->text(), QStringLiteral("second\n"));
        QVERIFY(!editors->editorForFile("kernels/k.cu"));
        QVERIFY2(window.resultPanel()->titleText().contains("hand-edit evaluation 2"),
                 qPrintable(window.resultPanel()->titleText()));
        QVERIFY(window.resultPanel()->comparisonText().contains("reward +2"));
        QVERIFY2(window.contextText().contains("hand-edit history"),
                 qPrintable(window.contextText()));
        QCOMPARE(window.context().kind, WorkbenchContext::Kind::Workspace);
        // Compared with an earlier evaluation like any agent step.
        QDialog* diff = window.compareShownStepWith(evaluations[0]);
        QVERIFY(diff);
        auto* view = diff->findChild<DiffView*>();
        QVERIFY(view && view->titleText().startsWith("Hand edits:"));
        QCOMPARE(view->model()->stats().added, 1);
        diff->close();

        window.backToWorkspace();
        QVERIFY(!editors->isReadOnly());
        QCOMPARE(window.context().step, -1);
        // The same point again is a new selection, not an echo of the old one.
        emit rewards->stepSelected(agent::kEditHistoryEpisodeId, evaluations[1]);
        QCOMPARE(window.shownStep(), evaluations[1]);
    }

    void aTimelineKernelSelectsItsStatisticsRow() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        TimelinePane* timeline = window.timelinePane();
        timeline->setTimeline(kwb::testing::makeStreamTimeline({{0, 10}, {20, 50}, {60, 65}}, 3));
        QSignalSpy kernels(window.selectionHub(), &SelectionHub::kernelSelected);
        emit timeline->kernelSelected("k1", 0, 1, 20, 50);
        QCOMPARE(kernels.count(), 1);
        QCOMPARE(window.selectionHub()->kernelName(), QStringLiteral("k1"));
        const QModelIndexList rows = timeline->statisticsTable()->selectionModel()->selectedRows(
            KernelStatisticsModel::Name);
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows.first().data().toString(), QStringLiteral("k1"));
        QVERIFY(timeline->searchBox()->text().isEmpty()); // selected, not filtered
    }
};

QTEST_MAIN(TestSelectionHub)
#include "test_selection_hub.moc"
