// The Rollouts view end to end, CPU mode: rollouts started from the GUI against the scripted LLM
// server run in the background, the view follows them live (runs, episodes, metrics, reward
// distribution), Pause holds a running episode between its steps and Continue releases it,
// Stop ends a run that Resume then completes without losing or repeating an item, and an
// episode opens in the agent pane.
#include "agent/store/trajectory_store.h"
#include "engine/system/resource_paths.h"
#include "tests/agent/scripted_llm_server.h"
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/agent/rollout_panes.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/rollout/rollout_controller.h"
#include "widgets/rollout/rollout_episode_model.h"
#include "widgets/rollout/rollout_metrics_model.h"
#include "widgets/runs/reward_histogram.h"
#include "widgets/runs/rollout_launch_dialog.h"
#include "widgets/runs/rollouts_view.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

using namespace kwb;
using namespace kwb::ui;
using kwb::agent::test_support::ScriptedLlmServer;
using nlohmann::json;

namespace {

constexpr int kTimeoutMs = 120000; // CPU evaluations on a shared 2-core machine

json doneTurn() {
    return {{"text", "Nothing to change. Done."}, {"usage", {{"input", 200}, {"output", 6}}}};
}

// A turn whose first delivery streams slowly (the fault), so the test can act while it streams.
json slow(json turn, double delay) {
    turn["faults"] = json::array({{{"kind", "slow_tokens"}, {"delay", delay}}});
    return turn;
}

json readTurn() {
    return {{"text", "Reading the skill file first, then I will decide what to change."},
            {"tool_calls",
             {{{"id", "call_1"}, {"name", "Read"}, {"arguments", {{"file_path", "SKILL.md"}}}}}},
            {"usage", {{"input", 300}, {"output", 20}}}};
}

int rowsOfRun(const QString& store, qint64 run) {
    auto opened = agent::TrajectoryStore::open(store.toStdString());
    if (!opened)
        return -1;
    agent::EpisodeFilter filter;
    filter.runId = run;
    filter.limit = 0;
    auto listed = opened.value()->listEpisodes(filter);
    return listed ? int(listed.value().size()) : -1;
}

QString cell(QAbstractItemModel* model, int row, int column) {
    return model->index(row, column).data().toString();
}

} // namespace

class TestRolloutsView : public QObject {
    Q_OBJECT
private slots:
    void theLaunchDialogAsksForWhatKwbRolloutTakes() {
        agent::ProviderSettings provider =
            agent::ProviderSettings::defaultsFor(agent::ProviderKind::OpenAiChat);
        provider.baseUrl = "http://127.0.0.1:9/v1";
        provider.model = "scripted";
        RolloutLaunchDialog dialog(provider, QStringLiteral("/opt/py/bin/python3"));
        QVERIFY(dialog.problem().contains(QLatin1String("task set")));
        dialog.setTaskSet(QStringLiteral("/no/such/folder"));
        QVERIFY(dialog.problem().contains(QLatin1String("does not exist")));
        QTemporaryDir dir;
        dialog.setTaskSet(dir.path());
        QVERIFY(dialog.problem().isEmpty());
        dialog.episodesPerTaskBox()->setValue(4);
        dialog.concurrencyBox()->setValue(3);
        dialog.deviceBox()->setCurrentIndex(dialog.deviceBox()->findData(QStringLiteral("cpu")));
        const agent::RolloutConfig config = dialog.config();
        QCOMPARE(config.taskSetPath, dir.path().toStdString());
        QCOMPARE(config.episodesPerTask, 4);
        QCOMPARE(config.concurrency, 3);
        QCOMPARE(config.provider.baseUrl, std::string("http://127.0.0.1:9/v1"));
        QCOMPARE(config.provider.model, std::string("scripted"));
        QCOMPARE(config.python, std::string("/opt/py/bin/python3"));
        QVERIFY(config.evaluation.evaluationProfile == EvaluationProfile::Rl);
        QVERIFY(config.evaluation.device == DeviceChoice::Cpu);
        dialog.modelEdit()->clear();
        QVERIFY(dialog.problem().contains(QLatin1String("model")));
        QVERIFY2(!config.maxTokens, "no limit unless one is set");

        // A local model: no endpoint and no key to give, the model is a file that must exist,
        // and a CPU-sized reply limit travels with the run.
        QComboBox* kind = dialog.providerBox();
        kind->setCurrentIndex(kind->findData(int(agent::ProviderKind::LocalModel)));
        const QString modelFile = dir.filePath(QStringLiteral("model.gguf"));
        dialog.modelEdit()->setText(modelFile);
        QVERIFY(dialog.problem().contains(QLatin1String("does not exist")));
        QFile(modelFile).open(QIODevice::WriteOnly);
        QVERIFY(dialog.problem().isEmpty());
        QVERIFY(!dialog.baseUrlEdit()->isEnabled());
        dialog.maxTokensBox()->setValue(256);
        const agent::RolloutConfig local = dialog.config();
        QVERIFY(local.provider.kind == agent::ProviderKind::LocalModel);
        QCOMPARE(local.provider.model, modelFile.toStdString());
        QVERIFY(local.provider.baseUrl.empty());
        QVERIFY(local.provider.apiKeyEnv.empty());
        QCOMPARE(*local.maxTokens, 256);
    }

    void aRolloutRunsLiveIsPausedStoppedResumedAndOpened() {
        ScriptedLlmServer server(json{
            {"turns",
             {// Run 1, episode 1: a slow tool call (the pause lands while it streams), the
              // same call again, then done. Episode 2: done.
              slow(readTurn(), 0.25), doneTurn(), doneTurn(),
              // Run 2: the first episode streams slowly and is stopped; after the resume, the
              // same turn again and then the other task, slowly: the first one's metrics
              // show while it streams.
              slow(doneTurn(), 0.5), doneTurn(), slow(doneTurn(), 0.5), doneTurn(), doneTurn()}}});
        QVERIFY2(server.started(), server.startError().c_str());

        QTemporaryDir dir;
        const QString store = dir.filePath(QStringLiteral("store.db"));
        const QString tasks = dir.filePath(QStringLiteral("tasks"));
        QVERIFY(QDir().mkpath(tasks));
        for (const char* task : {"01_gelu.py", "07_scale_residual_add.py"})
            QVERIFY(QFile::copy(QString::fromStdString(kwb::bundledTasksDirectory() + "/" + task),
                                tasks + '/' + QLatin1String(task)));

        EngineBridge bridge;
        QWidget host;
        AgentPanes agentPanes(bridge, store, &host);
        RolloutPanes panes(
            bridge, agentPanes, [] { return QString(); }, &host);
        RolloutsView* view = panes.view();
        auto* layout = new QHBoxLayout(&host);
        layout->addWidget(agentPanes.agentPane());
        layout->addWidget(view, 1);
        host.resize(1800, 900);
        host.show();
        QVERIFY(QTest::qWaitForWindowExposed(&host));
        auto* episodes = view->episodeView()->model();
        QAbstractItemModelTester episodesTester(
            episodes, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester metricsTester(
            view->metricsView()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        RolloutController* controller = panes.controller();
        QSignalSpy ended(controller, &RolloutController::runEnded);
        QSignalSpy failed(controller, &RolloutController::runFailed);
        QElapsedTimer clock;
        clock.start();
        // What the runner said, in the log of a failing run.
        connect(controller, &RolloutController::runFailed, this,
                [](const QString& m) { qInfo("run failed: %s", qPrintable(m)); });
        connect(controller, &RolloutController::runEnded, this,
                [](qint64, const QString&, const QString& m) { qInfo("%s", qPrintable(m)); });
        connect(controller, &RolloutController::progressed, this,
                [&server, &clock](qint64 run, int done, int planned, int) {
                    qInfo("%lld ms: run %lld: %d of %d, %zu model requests", clock.elapsed(), run,
                          done, planned, server.requests().size());
                });

        panes.refreshRuns();
        QTRY_VERIFY_WITH_TIMEOUT(view->statusLabel()->text().contains(QLatin1String("No rollout")),
                                 kTimeoutMs);
        QVERIFY(view->newButton()->isEnabled());
        QVERIFY(!view->pauseButton()->isEnabled());

        agent::RolloutConfig config;
        config.taskSetPath = tasks.toStdString();
        config.episodesPerTask = 1;
        config.concurrency = 1;
        config.maxTurns = 5;
        config.provider = agent::ProviderSettings::defaultsFor(agent::ProviderKind::OpenAiChat);
        config.provider.baseUrl = server.url("/v1");
        config.provider.model = "scripted";
        config.provider.retry.maxAttempts = 1;
        config.python = KWB_TEST_EXPECTED_PYTHON;
        config.evaluation.device = DeviceChoice::Cpu;

        // Run 1: the view selects it as soon as the runner opens it.
        QVERIFY(controller->start(config));
        QVERIFY(!controller->start(config)); // one rollout at a time
        QCOMPARE(failed.count(), 1);
        QVERIFY(!view->newButton()->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(view->selectedRun(), qint64(1), kTimeoutMs);
        QVERIFY(view->pauseButton()->isEnabled());

        // Pause while the first reply streams: the episode stops after that step, before its
        // next model call, and stays running (paused), not stopped.
        QTRY_VERIFY_WITH_TIMEOUT(server.requests().size() >= 1, kTimeoutMs);
        view->pauseButton()->click();
        QVERIFY(controller->isPaused());
        QCOMPARE(view->pauseButton()->text(), QStringLiteral("Continue"));
        // The reply takes about 4 s to stream; well after it, nothing more was asked.
        QTest::qWait(7000);
        QCOMPARE(server.requests().size(), std::size_t(1));
        QCOMPARE(rowsOfRun(store, 1), 1);
        QTRY_COMPARE_WITH_TIMEOUT(cell(episodes, 0, RolloutEpisodeModel::StatusColumn),
                                  QStringLiteral("running"), kTimeoutMs);
        view->pauseButton()->click(); // Continue
        QVERIFY(!controller->isPaused());

        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, kTimeoutMs);
        QCOMPARE(ended[0][1].toString(), QStringLiteral("finished"));
        QVERIFY2(ended[0][2].toString().contains(QLatin1String("2 of 2 done")),
                 qPrintable(ended[0][2].toString()));
        QCOMPARE(server.requests().size(), std::size_t(4));
        // The view re-reads the finished run: both episodes scored, their rewards distributed.
        QTRY_COMPARE_WITH_TIMEOUT(episodes->rowCount(), 2, kTimeoutMs);
        QTRY_COMPARE_WITH_TIMEOUT(
            cell(view->metricsView()->model(), RolloutMetricsModel::ScoredRow, 0),
            QStringLiteral("2"), kTimeoutMs);
        QCOMPARE(view->histogram()->total(), 2);
        QTRY_COMPARE_WITH_TIMEOUT(cell(episodes, 1, RolloutEpisodeModel::StatusColumn),
                                  QStringLiteral("finished"), kTimeoutMs);
        QCOMPARE(cell(episodes, 0, RolloutEpisodeModel::TaskColumn), QStringLiteral("01_gelu"));
        QVERIFY(view->newButton()->isEnabled());
        QVERIFY(!view->resumeButton()->isEnabled()); // a finished run has nothing left

        // An episode opens in the agent pane.
        view->episodeView()->setCurrentIndex(episodes->index(1, 0));
        const qint64 second =
            episodes->index(1, 0).data(RolloutEpisodeModel::EpisodeIdRole).toLongLong();
        QVERIFY(view->openButton()->isEnabled());
        view->openButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(agentPanes.agentPane()->shownEpisode() &&
                                     agentPanes.agentPane()->shownEpisode()->record.id == second,
                                 kTimeoutMs);

        // Run 2: stopped while its first reply streams; its running episode is given up, and
        // recorded as cancelled (the resume runs its sample afresh).
        QVERIFY(controller->start(config));
        QTRY_COMPARE_WITH_TIMEOUT(view->selectedRun(), qint64(2), kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(server.requests().size() >= 5, kTimeoutMs);
        view->stopButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, kTimeoutMs);
        QCOMPARE(ended[1][1].toString(), QStringLiteral("stopped"));
        QVERIFY2(ended[1][2].toString().contains(QLatin1String("0 of 2 done")),
                 qPrintable(ended[1][2].toString()));
        QTRY_VERIFY_WITH_TIMEOUT(view->resumeButton()->isEnabled(), kTimeoutMs);
        QTRY_COMPARE_WITH_TIMEOUT(cell(episodes, 0, RolloutEpisodeModel::StatusColumn),
                                  QStringLiteral("cancelled"), kTimeoutMs);

        // Resume: the cancelled item runs again and the other one once; nothing twice. The
        // metrics and the reward distribution follow the run live, not only when it ends.
        view->resumeButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(
            cell(view->metricsView()->model(), RolloutMetricsModel::ScoredRow, 0),
            QStringLiteral("1"), kTimeoutMs);
        QCOMPARE(ended.count(), 2); // still running: the second episode streams
        QCOMPARE(view->histogram()->total(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 3, kTimeoutMs);
        QCOMPARE(ended[2][0].toLongLong(), qint64(2));
        QCOMPARE(ended[2][1].toString(), QStringLiteral("finished"));
        QTRY_COMPARE_WITH_TIMEOUT(episodes->rowCount(), 3, kTimeoutMs);
        QTRY_COMPARE_WITH_TIMEOUT(
            cell(view->metricsView()->model(), RolloutMetricsModel::ScoredRow, 0),
            QStringLiteral("2"), kTimeoutMs);
        QCOMPARE(rowsOfRun(store, 2), 3);
        QCOMPARE(failed.count(), 1);
        // The run list is re-read after the run ends; its answer may come after the episodes'.
        QTRY_VERIFY_WITH_TIMEOUT(view->runBox()->itemText(0).contains(QLatin1String("finished")),
                                 kTimeoutMs);
        QCOMPARE(view->runBox()->count(), 2);
    }
};

QTEST_MAIN(TestRolloutsView)
#include "test_rollouts_view.moc"
