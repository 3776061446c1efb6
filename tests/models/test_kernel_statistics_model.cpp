#include "tests/timeline/timeline_fixture.h"
#include "widgets/models/kernel_statistics_model.h"

#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QTest>

using namespace kwb;
using namespace kwb::ui;

class TestKernelStatisticsModel : public QObject {
    Q_OBJECT
private slots:
    void passesTheModelTesterThroughResets() {
        KernelStatisticsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), int{KernelStatisticsModel::ColumnCount});
        model.setTimeline(kwb::testing::makeSyntheticTimeline({.kernels = 3000}));
        QCOMPARE(model.rowCount(), 8); // 4 eager + 2 compile + 2 candidate kernel names
        model.setTimeline(nullptr);
        QCOMPARE(model.rowCount(), 0);
        model.setTimeline(kwb::testing::makeSyntheticTimeline({.kernels = 3000, .seed = 7}));

        QSortFilterProxyModel proxy;
        QAbstractItemModelTester proxyTester(
            &proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.setSourceModel(&model);
        proxy.setSortRole(KernelStatisticsModel::SortRole);
        proxy.sort(KernelStatisticsModel::Count, Qt::AscendingOrder);
        proxy.setFilterKeyColumn(KernelStatisticsModel::Name);
        proxy.setFilterRegularExpression("at::native");
        QCOMPARE(proxy.rowCount(), 3);
    }

    void showsCountsDurationsAndShares() {
        // Two names: k0 has 1000 + 3000 ns, k1 has 4000 ns.
        const auto timeline =
            kwb::testing::makeStreamTimeline({{0, 1000}, {2000, 6000}, {7000, 10000}}, 2);
        KernelStatisticsModel model;
        model.setTimeline(timeline);
        QCOMPARE(model.rowCount(), 2);
        const int k0 = model.rowOfName(0);
        QVERIFY(k0 >= 0);
        const auto cell = [&](int row, int column, int role = Qt::DisplayRole) {
            return model.data(model.index(row, column), role);
        };
        QCOMPARE(cell(k0, KernelStatisticsModel::Name).toString(), QString("k0"));
        QCOMPARE(cell(k0, KernelStatisticsModel::Count).toString(), QString("2"));
        QCOMPARE(cell(k0, KernelStatisticsModel::Total).toString(), QString("4.000 µs"));
        QCOMPARE(cell(k0, KernelStatisticsModel::Mean).toString(), QString("2.000 µs"));
        QCOMPARE(cell(k0, KernelStatisticsModel::Min).toString(), QString("1.000 µs"));
        QCOMPARE(cell(k0, KernelStatisticsModel::Max).toString(), QString("3.000 µs"));
        QCOMPARE(cell(k0, KernelStatisticsModel::Share).toString(), QString("50.0%"));
        QCOMPARE(
            cell(k0, KernelStatisticsModel::Total, KernelStatisticsModel::SortRole).toLongLong(),
            4000);
        QCOMPARE(cell(k0, KernelStatisticsModel::Name, KernelStatisticsModel::NameIdRole).toUInt(),
                 0u);
        QCOMPARE(model.rowOfName(99), -1);

        // Sorting by the raw numbers: "10 µs" must not sort before "9 µs".
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(KernelStatisticsModel::SortRole);
        proxy.sort(KernelStatisticsModel::Max, Qt::DescendingOrder);
        QCOMPARE(proxy.index(0, KernelStatisticsModel::Name).data().toString(), QString("k1"));
        QCOMPARE(model.headerData(KernelStatisticsModel::Share, Qt::Horizontal).toString(),
                 QString("% of total"));
    }
};

QTEST_GUILESS_MAIN(TestKernelStatisticsModel)
#include "test_kernel_statistics_model.moc"
