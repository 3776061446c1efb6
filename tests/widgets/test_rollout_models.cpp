// The Rollouts view's models: a run's episodes merged row by row as snapshots arrive, speed-ups
// shown only for passing candidates, and the paper's metrics by level against hand-computed
// values; both checked by Qt's model tester while they change.
#include "agent/rollout/rollout_metrics.h"
#include "episode_fixtures.h"
#include "widgets/rollout/rollout_episode_model.h"
#include "widgets/rollout/rollout_metrics_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace kwb;
using namespace kwb::ui;
using kwb::agent::EpisodeRecord;
using kwb::agent::EpisodeStatus;

namespace {

EpisodeRecord runEpisode(agent::EpisodeId id, const std::string& task, int sample,
                         EpisodeStatus status, std::optional<int> reward = {}, double vsEager = 0,
                         double vsCompile = 0, int level = 1) {
    EpisodeRecord e;
    e.id = id;
    e.task = "/runs/run-1/tasks/" + task + ".py";
    e.startedAt = "2026-12-03T10:00:0" + std::to_string(id) + ".000Z";
    e.status = status;
    e.settings = {{"run_id", 1},
                  {"run_task", task},
                  {"run_sample", sample},
                  {"run_attempt", 0},
                  {"task_level", level}};
    e.turns = 3 + int(id);
    e.costUsd = 0.01 * double(id);
    if (reward) {
        e.reward = *reward;
        e.finalEvaluation = test::evaluationPayload(*reward, vsEager, vsCompile, "final");
    }
    return e;
}

QString cell(const QAbstractItemModel& m, int row, int column) {
    return m.index(row, column).data().toString();
}

} // namespace

class TestRolloutModels : public QObject {
    Q_OBJECT
private slots:
    void episodesMergeRowByRowAndKeepTheirOrder() {
        RolloutEpisodeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEpisodes({runEpisode(1, "level1/a", 0, EpisodeStatus::Running)});
        QCOMPARE(model.rowCount(), 1);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        // The running episode settles and a second one starts: one change, one insertion.
        model.setEpisodes({runEpisode(1, "level1/a", 0, EpisodeStatus::Finished, 2, 1.5, 0.9),
                           runEpisode(2, "level1/a", 1, EpisodeStatus::Running)});
        QCOMPARE(reset.count(), 0);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(cell(model, 0, RolloutEpisodeModel::TaskColumn), QStringLiteral("level1/a"));
        QCOMPARE(cell(model, 0, RolloutEpisodeModel::StatusColumn), QStringLiteral("finished"));
        QCOMPARE(cell(model, 0, RolloutEpisodeModel::RewardColumn), QStringLiteral("2"));
        QCOMPARE(cell(model, 0, RolloutEpisodeModel::SpeedupEagerColumn), QStringLiteral("1.50x"));
        QCOMPARE(cell(model, 0, RolloutEpisodeModel::SpeedupCompileColumn),
                 QStringLiteral("0.90x"));
        QCOMPARE(cell(model, 1, RolloutEpisodeModel::SampleColumn), QStringLiteral("1"));
        QCOMPARE(model.index(1, 0).data(RolloutEpisodeModel::EpisodeIdRole).toLongLong(), 2);
        // An episode no longer in the snapshot leaves; the same snapshot again changes nothing.
        model.setEpisodes({runEpisode(2, "level1/a", 1, EpisodeStatus::Running)});
        QCOMPARE(model.rowCount(), 1);
        changed.clear();
        model.setEpisodes({runEpisode(2, "level1/a", 1, EpisodeStatus::Running)});
        QCOMPARE(changed.count(), 0);
    }

    void aRejectedCandidateShowsNoSpeedupAndAFailureItsCause() {
        RolloutEpisodeModel model;
        EpisodeRecord rejected =
            runEpisode(1, "level1/a", 0, EpisodeStatus::Finished, -1, 3.0, 2.0);
        EpisodeRecord failed = runEpisode(2, "level1/b", 0, EpisodeStatus::Failed);
        failed.endCause = "provider_error";
        EpisodeRecord retried = runEpisode(3, "level1/b", 0, EpisodeStatus::Finished, 1, 0.8, 0.5);
        retried.settings["run_attempt"] = 1;
        model.setEpisodes({rejected, failed, retried});
        // A timing of a wrong answer is not a speed-up.
        QCOMPARE(cell(model, 0, RolloutEpisodeModel::SpeedupEagerColumn), QStringLiteral("–"));
        QVERIFY(model.index(0, 0)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QLatin1String("not correct")));
        QCOMPARE(cell(model, 1, RolloutEpisodeModel::StatusColumn),
                 QStringLiteral("failed (provider_error)"));
        QCOMPARE(cell(model, 1, RolloutEpisodeModel::RewardColumn), QStringLiteral("–"));
        QCOMPARE(cell(model, 2, RolloutEpisodeModel::SampleColumn),
                 QStringLiteral("0 (attempt 2)"));
        QCOMPARE(cell(model, 2, RolloutEpisodeModel::SpeedupEagerColumn), QStringLiteral("0.80x"));
        // Numbers sort as numbers, a missing reward first.
        QVERIFY(model.index(1, RolloutEpisodeModel::RewardColumn)
                    .data(RolloutEpisodeModel::SortRole)
                    .toDouble() < -1.0);
        QCOMPARE(model.index(2, RolloutEpisodeModel::CostColumn)
                     .data(RolloutEpisodeModel::SortRole)
                     .toDouble(),
                 0.03);
    }

    void metricsByLevelEqualAHandComputedTable() {
        // Level 1: rewards 3 (2.0x eager, 1.2x compile) and -1; level 2: reward 2 (1.5x, 0.5x)
        // and an infrastructure error and a task that cannot be judged here, neither scored.
        std::vector<EpisodeRecord> episodes{
            runEpisode(1, "level1/a", 0, EpisodeStatus::Finished, 3, 2.0, 1.2, 1),
            runEpisode(2, "level1/b", 0, EpisodeStatus::Finished, -1, 0.0, 0.0, 1),
            runEpisode(3, "level2/c", 0, EpisodeStatus::Finished, 2, 1.5, 0.5, 2),
            runEpisode(4, "level2/d", 0, EpisodeStatus::InfrastructureError, {}, 0, 0, 2),
            runEpisode(5, "level2/e", 0, EpisodeStatus::Failed, {}, 0, 0, 2)};
        RolloutMetricsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0); // nothing to show before a run is read
        model.setMetrics(agent::metricsOfRecords(episodes));
        QCOMPARE(model.columnCount(), 3);
        QCOMPARE(model.headerData(0, Qt::Horizontal).toString(), QStringLiteral("All"));
        QCOMPARE(model.headerData(2, Qt::Horizontal).toString(), QStringLiteral("Level 2"));
        using R = RolloutMetricsModel;
        QCOMPARE(cell(model, R::EpisodesRow, 0), QStringLiteral("5"));
        QCOMPARE(cell(model, R::ScoredRow, 0), QStringLiteral("3"));
        QCOMPARE(cell(model, R::InfrastructureRow, 0), QStringLiteral("1"));
        QCOMPARE(cell(model, R::TaskFailuresRow, 0), QStringLiteral("1"));
        QCOMPARE(model.headerData(R::TaskFailuresRow, Qt::Vertical).toString(),
                 QStringLiteral("Tasks not judgeable here"));
        QCOMPARE(cell(model, R::PassRateRow, 0), QStringLiteral("66.7%"));
        QCOMPARE(cell(model, R::FasterThanEagerRow, 0), QStringLiteral("66.7%"));
        QCOMPARE(cell(model, R::FasterThanCompileRow, 0), QStringLiteral("33.3%"));
        // sqrt(2.0 * 1.5) = 1.732; sqrt(1.2 * 0.5) = 0.775
        QCOMPARE(cell(model, R::GeomeanEagerRow, 0), QStringLiteral("1.732x"));
        QCOMPARE(cell(model, R::GeomeanCompileRow, 0), QStringLiteral("0.775x"));
        QCOMPARE(cell(model, R::FastP15Row, 0), QStringLiteral("33.3%")); // only 2.0x is above 1.5
        QCOMPARE(cell(model, R::FastP2Row, 0), QStringLiteral("0.0%"));   // above, not at, 2.0
        QCOMPARE(cell(model, R::MeanRewardRow, 0), QStringLiteral("1.33"));
        QCOMPARE(cell(model, R::PassRateRow, 1), QStringLiteral("50.0%"));
        QCOMPARE(cell(model, R::MeanRewardRow, 1), QStringLiteral("1.00"));
        QCOMPARE(cell(model, R::PassRateRow, 2), QStringLiteral("100.0%"));
        QCOMPARE(cell(model, R::GpuSecondsRow, 0), QStringLiteral("–")); // CPU mode
        // A level with no scored episode shows no rates rather than 0%.
        model.setMetrics(agent::metricsOfRecords({episodes[3]}));
        QCOMPARE(model.columnCount(), 1); // one level: the "All" column says it
        QCOMPARE(cell(model, R::EpisodesRow, 0), QStringLiteral("1"));
        QCOMPARE(cell(model, R::PassRateRow, 0), QStringLiteral("–"));
        QCOMPARE(cell(model, R::MeanRewardRow, 0), QStringLiteral("–"));
    }
};

QTEST_MAIN(TestRolloutModels)
#include "test_rollout_models.moc"
