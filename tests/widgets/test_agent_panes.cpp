// The agent panes end to end over a real trajectory store: a stored episode is listed, opened,
// replayed, plotted and exported through the engine bridge; and a live episode, played by the
// scripted LLM server, streams into the panes while it runs and is steered from them.
#include "agent/store/trajectory_store.h"
#include "engine/system/resource_paths.h"
#include "episode_fixtures.h"
#include "tests/agent/scripted_llm_server.h"
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/core/agent_session_controller.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/models/conversation_model.h"
#include "widgets/models/run_list_model.h"
#include "widgets/runs/reward_plot.h"
#include "widgets/runs/rewards_pane.h"
#include "widgets/runs/runs_browser.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QListView>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace kwb;
using namespace kwb::ui;
using namespace kwb::ui::test;
using kwb::agent::EventKind;
using kwb::agent::TrajectoryStore;
using nlohmann::json;

namespace {

constexpr int kTimeoutMs = 60000;

// Writes one finished episode through the store API, the way the runner does.
kwb::agent::EpisodeId storeEpisode(const QString& path) {
    auto opened = TrajectoryStore::open(path.toStdString());
    if (!opened)
        qFatal("cannot open the store: %s", opened.error().message.c_str());
    TrajectoryStore& store = *opened.value();
    kwb::agent::EpisodeRecord record;
    record.task = "/tasks/level1/01_gelu.py";
    record.provider = "scripted";
    record.model = "gpt-4o";
    record.settings["max_turns"] = 10;
    record.usage = {12000, 800, 4000};
    const auto id = store.createEpisode(record).value().id;
    const auto append = [&](EventKind kind, json payload) {
        if (!store.appendEvent(id, kind, std::move(payload)))
            qFatal("appendEvent failed");
    };
    append(EventKind::SystemPrompt, {{"role", "system"}, {"text", "Optimise the GELU."}});
    append(EventKind::AssistantMessage, assistant("Let me verify the starter."));
    append(EventKind::ToolCall, {{"id", "c1"}, {"name", "Verify"}, {"arguments", "{}"}});
    append(EventKind::ToolResult, {{"role", "tool"},
                                   {"text", "incorrect"},
                                   {"tool", "Verify"},
                                   {"tool_call_id", "c1"},
                                   {"tool_error", false}});
    append(EventKind::Evaluation, evaluationPayload(-1, 0, 0));
    append(EventKind::AssistantMessage, assistant("Fixed the kernel; profiling."));
    append(EventKind::Evaluation, evaluationPayload(2, 1.9, 1.3, "Profile"));
    kwb::agent::EpisodeOutcome outcome;
    outcome.reward = 2;
    outcome.finalEvaluation = evaluationPayload(2, 1.9, 1.3, "final");
    if (!store.finishEpisode(id, outcome))
        qFatal("finishEpisode failed");
    return id;
}

// The panes laid out in their host window, shown offscreen (clicks need real geometry).
void showInWindow(QWidget& host, AgentPanes& panes) {
    auto* layout = new QHBoxLayout(&host);
    layout->addWidget(panes.agentPane());
    layout->addWidget(panes.rewardsPane(), 1);
    layout->addWidget(panes.runsBrowser());
    host.resize(1800, 900);
    host.show();
    QVERIFY(QTest::qWaitForWindowExposed(&host));
}

json toolTurn(const std::string& text, const std::string& id, const std::string& name,
              const json& arguments) {
    return {{"text", text},
            {"tool_calls", {{{"id", id}, {"name", name}, {"arguments", arguments}}}},
            {"usage", {{"input", 300}, {"output", 20}}}};
}

} // namespace

class TestAgentPanes : public QObject {
    Q_OBJECT
private slots:
    void aStoredEpisodeIsListedOpenedPlottedReplayedAndExported() {
        QTemporaryDir dir;
        const QString storePath = dir.filePath(QStringLiteral("store.db"));
        const auto id = storeEpisode(storePath);

        EngineBridge bridge;
        QWidget host;
        AgentPanes panes(bridge, storePath, &host);
        panes.refreshRuns();
        QTRY_VERIFY_WITH_TIMEOUT(panes.hasEpisodeList(), kTimeoutMs);
        RunListModel* runs = panes.runListModel();
        QCOMPARE(runs->rowCount(), 1);
        QCOMPARE(runs->index(0, RunListModel::StatusColumn).data().toString(),
                 QStringLiteral("finished"));
        QCOMPARE(runs->index(0, RunListModel::RewardColumn).data().toDouble(), 2.0);

        AgentPane* agent = panes.agentPane();
        showInWindow(host, panes);
        panes.openEpisode(id);
        QTRY_VERIFY_WITH_TIMEOUT(agent->shownEpisode() != nullptr, kTimeoutMs);
        QCOMPARE(agent->mode(), AgentPane::Mode::Stored);
        // Seven steps and the status event finishEpisode wrote.
        ConversationModel* conversation = agent->conversationModel();
        QCOMPARE(conversation->rowCount(), 8);
        QCOMPARE(conversation->index(2).data(ConversationModel::TitleRole).toString(),
                 QStringLiteral("Tool call: Verify"));
        QCOMPARE(conversation->index(6).data(ConversationModel::RewardRole).toInt(), 2);
        QVERIFY(agent->statusText().contains(QStringLiteral("Finished · reward 2")));
        // 12000 input tokens (4000 cached) and 800 output at gpt-4o's list price.
        QVERIFY2(agent->metersText().contains(QStringLiteral("in 12.0k · out 800 · cached 4000")),
                 qPrintable(agent->metersText()));
        QVERIFY2(agent->metersText().contains(QLatin1String("$0.0330")),
                 qPrintable(agent->metersText()));

        RewardsPane* rewards = panes.rewardsPane();
        QCOMPARE(rewards->episode(), agent->shownEpisode());
        RewardPlot* plot = rewards->rewardPlot();
        QCOMPARE(plot->pointCount(), 2);
        QCOMPARE(plot->series()[0].points[1].y, 2.0);
        QSignalSpy selected(rewards, &RewardsPane::stepSelected);
        QTest::mouseClick(plot, Qt::LeftButton, {}, plot->pixelOf(0, 1).toPoint());
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected[0][1].toLongLong(), 7);
        // Linked: the conversation selects the evaluation that was clicked.
        QCOMPARE(agent->conversationView()->currentIndex().row(), 6);

        panes.replayEpisode(id);
        QTRY_COMPARE_WITH_TIMEOUT(agent->mode(), AgentPane::Mode::Replay, kTimeoutMs);
        QCOMPARE(conversation->rowCount(), 1);
        agent->replayStep(+4);
        QCOMPARE(conversation->rowCount(), 5);
        QCOMPARE(rewards->rewardPlot()->pointCount(), 1); // the plot follows the replay
        agent->replayStep(-2);
        QCOMPARE(conversation->rowCount(), 3);
        agent->replayTo(100);
        QCOMPARE(conversation->rowCount(), 8);

        panes.aggregateEpisodes({id});
        QTRY_COMPARE_WITH_TIMEOUT(rewards->meanRewardPlot()->pointCount(), 2, kTimeoutMs);

        const QString file = dir.filePath(QStringLiteral("out.jsonl"));
        QSignalSpy exported(&bridge, &EngineBridge::episodeExportDone);
        bridge.requestEpisodeExport(storePath, {id}, file);
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, kTimeoutMs);
        QVERIFY2(exported[0][0].toBool(), qPrintable(exported[0][1].toString()));
        QFile out(file);
        QVERIFY(out.open(QIODevice::ReadOnly));
        const QByteArray text = out.readAll();
        QCOMPARE(text.count('\n'), 1);
        QVERIFY(text.contains("\"kwb.episode\""));
    }

    void aMissingStoreIsAnEmptyListAndIsNotCreated() {
        QTemporaryDir dir;
        const QString storePath = dir.filePath(QStringLiteral("none.db"));
        EngineBridge bridge;
        QWidget host;
        AgentPanes panes(bridge, storePath, &host);
        panes.refreshRuns();
        QTRY_VERIFY_WITH_TIMEOUT(panes.hasEpisodeList(), kTimeoutMs);
        QCOMPARE(panes.runListModel()->rowCount(), 0);
        QVERIFY(!QFile::exists(storePath));
    }

    void aLiveScriptedEpisodeUpdatesThePanesAndIsSteered() {
        using kwb::agent::test_support::ScriptedLlmServer;
        // Turn 2 streams slowly so the test can interrupt it; the retried call gets turn 3.
        json slow = {{"text", "Let me think about this for quite a while before I answer you."},
                     {"faults", {{{"kind", "slow_tokens"}, {"delay", 0.3}}}}};
        ScriptedLlmServer server(json{
            {"turns",
             {toolTurn("Reading the skill file.", "call_1", "Read", {{"file_path", "SKILL.md"}}),
              slow,
              {{"text", "Done."}, {"usage", {{"input", 500}, {"output", 5}}}},
              {{"text", "Forked: done differently."}}}}});
        QVERIFY2(server.started(), server.startError().c_str());

        QTemporaryDir dir;
        const QString storePath = dir.filePath(QStringLiteral("store.db"));
        EngineBridge bridge;
        QWidget host;
        AgentPanes panes(bridge, storePath, &host);
        AgentPane* agent = panes.agentPane();
        showInWindow(host, panes);
        agent->setTaskPath(QString::fromStdString(kwb::bundledTasksDirectory() + "/01_gelu.py"));
        agent->setProvider(kwb::agent::ProviderKind::OpenAiChat,
                           QString::fromStdString(server.url("/v1")), QStringLiteral("scripted"));
        agent->setMaxTurns(5);
        kwb::agent::AgentLaunch request = agent->startRequest();
        QCOMPARE(request.provider.model, std::string("scripted"));
        QCOMPARE(request.maxTurns, 5);
        request.provider.apiKey = "sk-test-live-key";
        request.provider.retry.maxAttempts = 1;
        request.workspace = dir.filePath(QStringLiteral("ws")).toStdString();
        request.python = KWB_TEST_EXPECTED_PYTHON;
        request.finalEvaluation = false; // no Python evaluation: this test is about the panes

        ConversationModel* conversation = agent->conversationModel();
        // The models stay consistent while the live episode inserts and changes rows.
        QAbstractItemModelTester conversationTester(
            conversation, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester runsTester(panes.runListModel(),
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(conversation, &QAbstractItemModel::rowsInserted);
        QSignalSpy finished(panes.controller(), &AgentSessionController::sessionFinished);
        QVERIFY(panes.controller()->start(request));
        QVERIFY(!agent->startButton()->isEnabled());
        QVERIFY(agent->stopAction()->isEnabled());

        // Interrupt while the slow second reply streams: the call is cancelled, the agent pauses.
        const auto hasRow = [&](const QString& prefix) {
            for (int row = 0; row < conversation->rowCount(); ++row)
                if (conversation->index(row)
                        .data(ConversationModel::TitleRole)
                        .toString()
                        .startsWith(prefix))
                    return true;
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(hasRow(QStringLiteral("Read result")) &&
                                     panes.controller()->agentState() ==
                                         kwb::agent::AgentState::Thinking,
                                 kTimeoutMs);
        QVERIFY(agent->statusText().startsWith(QLatin1String("Thinking")));
        QVERIFY(agent->shownEpisode()->record.id > 0);
        QCOMPARE(panes.runListModel()->rowCount(), 1); // the live row, without re-reading the store
        QVERIFY(panes.runListModel()->index(0, 0).data(RunListModel::RunningRole).toBool());
        // The slow reply shows as it streams, before the turn ends.
        QTRY_VERIFY_WITH_TIMEOUT(agent->liveReplyText().contains(QLatin1String("Let me")),
                                 kTimeoutMs);
        // Running: Pause, not Resume. Pause is acknowledged at once, before the step ends.
        QVERIFY(agent->pauseAction()->isEnabled());
        QVERIFY(!agent->resumeAction()->isEnabled());
        agent->pauseAction()->trigger();
        QVERIFY2(agent->statusText().startsWith(QLatin1String("Pausing after this step")),
                 qPrintable(agent->statusText()));
        QVERIFY(!agent->pauseAction()->isEnabled());
        agent->interruptAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(agent->statusText(), QStringLiteral("Paused"), kTimeoutMs);
        // Paused: Resume, not Pause.
        QTRY_VERIFY_WITH_TIMEOUT(agent->resumeAction()->isEnabled(), kTimeoutMs);
        QVERIFY(!agent->pauseAction()->isEnabled());

        // A queued message is delivered when the agent resumes.
        agent->messageBox()->setText(QStringLiteral("Please wrap up."));
        agent->messageMode()->setCurrentIndex(0);
        QTest::keyClick(agent->messageBox(), Qt::Key_Return);
        QVERIFY(agent->messageBox()->text().isEmpty());
        agent->resumeAction()->trigger();

        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeoutMs);
        QVERIFY2(finished[0][0].toString().contains(QLatin1String("finished")),
                 qPrintable(finished[0][0].toString()));
        QVERIFY(!panes.controller()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(agent->shownEpisode()->record.status ==
                                     kwb::agent::EpisodeStatus::Finished,
                                 kTimeoutMs);
        // The rows arrived one by one while it ran, not as one reset at the end.
        QVERIFY2(inserted.count() >= 8, qPrintable(QString::number(inserted.count())));
        QVERIFY(hasRow(QStringLiteral("Tool call: Read  SKILL.md")));
        QVERIFY(hasRow(QStringLiteral("Steering: interrupted")));
        QVERIFY(hasRow(QStringLiteral("User: Please wrap up.")));
        QVERIFY(hasRow(QStringLiteral("Steering: resumed")));
        const auto last = conversation->index(conversation->rowCount() - 1);
        QVERIFY(last.data(ConversationModel::TitleRole)
                    .toString()
                    .startsWith(QLatin1String("Status: finished")));
        QCOMPARE(panes.runListModel()->index(0, RunListModel::StatusColumn).data().toString(),
                 QStringLiteral("finished"));
        QVERIFY(agent->startButton()->isEnabled());
        QVERIFY(agent->metersText().contains(QLatin1String("cost n/a"))); // "scripted" has no price

        // The key reached the server and not the store.
        const auto requests = server.requests();
        QCOMPARE(requests.size(), std::size_t(3));
        QCOMPARE(requests[0]["headers"].value("authorization", ""),
                 std::string("Bearer sk-test-live-key"));
        QFile storeFile(storePath);
        QVERIFY(storeFile.open(QIODevice::ReadOnly));
        QVERIFY(!storeFile.readAll().contains("sk-test-live-key"));

        // Fork from the Read result: a new episode with the parent's steps up to there, which
        // the pane follows live.
        const auto parent = agent->shownEpisode();
        int readResult = -1;
        for (int row = 0; row < conversation->rowCount(); ++row)
            if (conversation->index(row)
                    .data(ConversationModel::TitleRole)
                    .toString()
                    .startsWith(QLatin1String("Read result")))
                readResult = row;
        QVERIFY(readResult > 0);
        agent->conversationView()->setCurrentIndex(conversation->index(readResult));
        QVERIFY(agent->forkButton()->isEnabled());
        const qint64 step =
            conversation->index(readResult).data(ConversationModel::SequenceRole).toLongLong();
        request.taskPath = parent->record.task;
        QVERIFY(panes.controller()->fork(parent->record.id, step, request));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kTimeoutMs);
        QVERIFY2(finished[1][0].toString().contains(QLatin1String("finished")),
                 qPrintable(finished[1][0].toString()));
        const auto fork = agent->shownEpisode();
        QVERIFY(fork->record.id != parent->record.id);
        QCOMPARE(fork->record.parentId, std::optional<kwb::agent::EpisodeId>(parent->record.id));
        QCOMPARE(fork->events[std::size_t(readResult)]->sequence, step); // the copied prefix
        QVERIFY(hasRow(QStringLiteral("Steering: forked from episode")));
        QCOMPARE(panes.runListModel()->rowCount(), 2);
    }
};

QTEST_MAIN(TestAgentPanes)
#include "test_agent_panes.moc"
