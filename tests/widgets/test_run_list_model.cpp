// The runs browser's model: episodes from the store, merged row by row on refresh, updated live,
// searched through the proxy, with a progress value only for running episodes.
#include "widgets/models/run_list_model.h"
#include "widgets/runs/runs_browser.h"

#include <QAbstractItemModelTester>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

using namespace kwb;
using namespace kwb::ui;
using kwb::agent::EpisodeRecord;
using kwb::agent::EpisodeStatus;

namespace {

EpisodeRecord record(kwb::agent::EpisodeId id, const std::string& task, EpisodeStatus status,
                     int turns = 0) {
    EpisodeRecord r;
    r.id = id;
    r.task = "/tasks/" + task;
    r.model = id % 2 ? "gpt-4o" : "claude-sonnet-4";
    r.status = status;
    r.turns = turns;
    r.settings["max_turns"] = 20;
    r.startedAt = "2026-01-0" + std::to_string(id) + "T10:00:00.000Z";
    if (status == EpisodeStatus::Finished)
        r.reward = 2;
    return r;
}

} // namespace

class TestRunListModel : public QObject {
    Q_OBJECT
private slots:
    void listsNewestFirstAndMergesRefreshes() {
        RunListModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEpisodes(
            {record(2, "b.py", EpisodeStatus::Finished), record(1, "a.py", EpisodeStatus::Failed)});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(RunListModel::ColumnCount));
        QCOMPARE(model.index(0, RunListModel::IdColumn).data().toLongLong(), 2);
        QCOMPARE(model.index(0, RunListModel::TaskColumn).data().toString(),
                 QStringLiteral("b.py"));
        QCOMPARE(model.index(0, RunListModel::RewardColumn).data().toDouble(), 2.0);
        QCOMPARE(model.index(1, RunListModel::StatusColumn).data().toString(),
                 QStringLiteral("failed"));
        QCOMPARE(
            model.index(0, RunListModel::ProgressColumn).data(RunListModel::ProgressRole).toInt(),
            -1);

        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.setEpisodes({record(3, "c.py", EpisodeStatus::Running, 5),
                           record(2, "b.py", EpisodeStatus::Finished)});
        QCOMPARE(reset.count(), 0);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.rowOf(3), 0);
        QCOMPARE(model.rowOf(1), -1);
    }

    void liveUpdatesInsertAndChangeRows() {
        RunListModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEpisodes({record(1, "a.py", EpisodeStatus::Finished)});
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        EpisodeRecord live = record(2, "b.py", EpisodeStatus::Running, 0);
        model.upsert(live);
        QCOMPARE(model.rowOf(2), 0);
        QCOMPARE(model.index(0, 0).data(RunListModel::ProgressRole).toInt(), 0);
        for (int turn = 1; turn <= 10; ++turn) {
            live.turns = turn;
            model.upsert(live);
        }
        QCOMPARE(changed.count(), 10);
        QCOMPARE(model.index(0, 0).data(RunListModel::ProgressRole).toInt(), 50);
        QCOMPARE(model.index(0, RunListModel::ProgressColumn).data().toString(),
                 QStringLiteral("50%"));
        model.upsert(live); // unchanged: no signal
        QCOMPARE(changed.count(), 10);
        live.status = EpisodeStatus::Finished;
        model.upsert(live);
        QCOMPARE(model.index(0, 0).data(RunListModel::ProgressRole).toInt(), -1);
        model.remove(1);
        QCOMPARE(model.rowCount(), 1);
    }

    void searchFiltersThroughTheProxy() {
        RunListModel model;
        RunsBrowser browser(&model);
        QAbstractItemModelTester tester(browser.proxy(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEpisodes({record(1, "01_gelu.py", EpisodeStatus::Finished),
                           record(2, "03_softmax.py", EpisodeStatus::Running, 4),
                           record(3, "04_layernorm.py", EpisodeStatus::Failed)});
        QCOMPARE(browser.proxy()->rowCount(), 3);
        browser.setSearchText(QStringLiteral("softmax"));
        QCOMPARE(browser.proxy()->rowCount(), 1);
        QCOMPARE(browser.proxy()->index(0, 0).data(RunListModel::EpisodeIdRole).toLongLong(), 2);
        browser.setSearchText(QStringLiteral("CLAUDE"));
        QCOMPARE(browser.proxy()->rowCount(), 1);
        browser.setSearchText(QStringLiteral("failed"));
        QCOMPARE(browser.proxy()->rowCount(), 1);
        // A live insert that matches the search shows up.
        model.upsert(record(4, "05_gemm.py", EpisodeStatus::Failed));
        QCOMPARE(browser.proxy()->rowCount(), 2);
        browser.setSearchText(QString());
        browser.selectEpisode(2);
        QCOMPARE(browser.selectedEpisodes(), std::vector<qint64>{2});
        QSignalSpy open(&browser, &RunsBrowser::openRequested);
        QSignalSpy aggregate(&browser, &RunsBrowser::aggregateRequested);
        for (auto* button : browser.findChildren<QPushButton*>()) {
            if (button->text() == QLatin1String("Open"))
                button->click();
            if (button->text() == QLatin1String("Aggregate"))
                button->click();
        }
        QCOMPARE(open.count(), 1);
        QCOMPARE(open[0][0].toLongLong(), 2);
        QCOMPARE(aggregate.count(), 1);
    }
};

QTEST_MAIN(TestRunListModel)
#include "test_run_list_model.moc"
