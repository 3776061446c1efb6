// The conversation list: one row per stored event, worded for a reader, folded where long, and
// growing row by row while an episode runs (checked by QAbstractItemModelTester throughout).
#include "episode_fixtures.h"
#include "widgets/agent/conversation_delegate.h"
#include "widgets/models/conversation_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace kwb;
using namespace kwb::ui;
using namespace kwb::ui::test;
using kwb::agent::EventKind;
using nlohmann::json;

namespace {

agent::EpisodeSnapshotPtr smallEpisode() {
    kwb::agent::EpisodeTrajectory t;
    t.episode.id = 3;
    t.episode.model = "m";
    t.events = {
        event(3, 1, EventKind::SystemPrompt,
              {{"role", "system"}, {"text", "You optimise kernels."}}),
        event(3, 2, EventKind::AssistantMessage,
              kwb::agent::messageToJson(kwb::agent::Message::assistant(
                  "I will write a kernel.",
                  {{"call_1", "Write", R"({"file_path":"model_new.py"})"}}))),
        event(3, 3, EventKind::ToolCall,
              {{"id", "call_1"},
               {"name", "Write"},
               {"arguments", R"({"file_path":"model_new.py"})"}}),
        event(3, 4, EventKind::ToolResult,
              {{"role", "tool"},
               {"text", "Wrote model_new.py"},
               {"tool", "Write"},
               {"tool_call_id", "call_1"},
               {"tool_error", false}}),
        event(3, 5, EventKind::Evaluation, evaluationPayload(2, 1.8, 1.2)),
        event(3, 6, EventKind::Status, {{"status", "running"}, {"message", "stuck: Read x3"}}),
    };
    return agent::makeEpisodeSnapshot(std::move(t));
}

} // namespace

class TestConversationModel : public QObject {
    Q_OBJECT
private slots:
    void rowsDescribeTheEvents() {
        ConversationModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSnapshot(smallEpisode());
        QCOMPARE(model.rowCount(), 6);
        const auto at = [&](int row, int role) { return model.index(row).data(role); };
        QCOMPARE(at(0, ConversationModel::TitleRole).toString(), QStringLiteral("System prompt"));
        QVERIFY(at(0, ConversationModel::FoldableRole).toBool());
        QVERIFY(!at(0, ConversationModel::ExpandedRole).toBool());
        QCOMPARE(at(1, ConversationModel::TitleRole).toString(),
                 QStringLiteral("Model (1 tool call)"));
        QCOMPARE(at(1, ConversationModel::BodyRole).toString(),
                 QStringLiteral("I will write a kernel."));
        QVERIFY(at(1, ConversationModel::ExpandedRole).toBool()); // model text is never folded
        QCOMPARE(at(2, ConversationModel::TitleRole).toString(),
                 QStringLiteral("Tool call: Write  model_new.py"));
        QVERIFY(at(3, ConversationModel::TitleRole)
                    .toString()
                    .startsWith(QLatin1String("Write result")));
        QVERIFY(at(4, ConversationModel::HasEvaluationRole).toBool());
        QCOMPARE(at(4, ConversationModel::RewardRole).toInt(), 2);
        QCOMPARE(at(4, ConversationModel::SpeedupVsCompileRole).toDouble(), 1.2);
        QVERIFY(at(4, ConversationModel::VerdictRole)
                    .toString()
                    .contains(QLatin1String("1.80x vs eager")));
        QVERIFY(at(5, ConversationModel::ProblemRole).toBool()); // stuck
        QCOMPARE(at(5, ConversationModel::SequenceRole).toLongLong(), 6);
        QCOMPARE(model.rowForSequence(4), 3);
        QCOMPARE(model.rowForSequence(99), -1);
    }

    void foldedRowsUnfoldOnToggle() {
        ConversationModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSnapshot(smallEpisode());
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.toggleExpanded(model.index(2));
        QCOMPARE(changed.count(), 1);
        QVERIFY(model.index(2).data(ConversationModel::ExpandedRole).toBool());
        QVERIFY(model.index(2)
                    .data(ConversationModel::BodyRole)
                    .toString()
                    .contains(QLatin1String("\"file_path\": \"model_new.py\"")));
        // A row that is not foldable stays as it is.
        QVERIFY(!model.setData(model.index(1), false, ConversationModel::ExpandedRole));
        QCOMPARE(changed.count(), 1);
    }

    void aGrowingEpisodeInsertsRowsAndKeepsUnfoldedOnes() {
        ConversationModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto full = smallEpisode();
        agent::EpisodeSnapshotPtr live = agent::truncatedTo(full, 2);
        model.setSnapshot(live);
        model.toggleExpanded(model.index(0));
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        for (std::size_t i = 2; i < full->events.size(); ++i) {
            live = agent::withEvent(live, *full->events[i]);
            model.setSnapshot(live);
        }
        QCOMPARE(model.rowCount(), 6);
        QCOMPARE(inserted.count(), 4);
        QCOMPARE(reset.count(), 0);
        QVERIFY(model.index(0).data(ConversationModel::ExpandedRole).toBool());
        // A repeated event (a subscriber that also loaded history) adds nothing.
        model.setSnapshot(agent::withEvent(live, *full->events[3]));
        QCOMPARE(model.rowCount(), 6);
        // Stepping a replay back removes rows; another episode resets.
        model.setSnapshot(agent::truncatedTo(full, 3));
        QCOMPARE(model.rowCount(), 3);
        model.setSnapshot(episodeWith(9, {{1, 1.0, 1.0}}));
        QCOMPARE(reset.count(), 1);
        QCOMPARE(model.rowCount(), 2);
    }

    void delegateCapsHugeBodies() {
        QStringList lines;
        for (int i = 0; i < 500; ++i)
            lines << QStringLiteral("line %1").arg(i);
        const QString shown = ConversationDelegate::shownBody(lines.join(QLatin1Char('\n')));
        QCOMPARE(shown.count(QLatin1Char('\n')), ConversationDelegate::kMaxBodyLines);
        QVERIFY(shown.endsWith(QLatin1String("440 more lines not shown")));
        QCOMPARE(ConversationDelegate::shownBody(QStringLiteral("a\nb")), QStringLiteral("a\nb"));
    }
};

QTEST_MAIN(TestConversationModel)
#include "test_conversation_model.moc"
