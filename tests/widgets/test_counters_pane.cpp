// The Counters pane on Nsight Compute output recorded on the H200 (tests/data/ncu): the kernel
// table (checked by Qt's model tester), the selected kernel's metrics and advice, the roofline
// drawn where the counters put each kernel, a baseline to compare with, and files that are not
// ncu's.
#include "engine/counters/ncu_files.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/counters/counters_kernel_model.h"
#include "widgets/counters/counters_pane.h"
#include "widgets/counters/roofline_chart.h"

#include <QAbstractItemModelTester>
#include <QImage>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

using namespace kwb::ui;

namespace {

QString recorded(const char* name) {
    return QStringLiteral(KWB_TEST_DATA_DIR) + "/ncu/" + name;
}

// The value column of the first details row named `metric` under `section`.
QString detailsValue(QTreeWidget* tree, const QString& section, const QString& metric,
                     int column = 1) {
    for (int i = 0; i < tree->topLevelItemCount(); ++i) {
        QTreeWidgetItem* top = tree->topLevelItem(i);
        if (top->text(0) != section)
            continue;
        for (int j = 0; j < top->childCount(); ++j)
            if (top->child(j)->text(0) == metric)
                return top->child(j)->text(column);
    }
    return {};
}

bool opens(CountersPane& pane, const QStringList& files, bool baseline = false) {
    QSignalSpy opened(&pane, &CountersPane::reportOpened);
    if (baseline)
        pane.openBaseline(files);
    else
        pane.openReport(files);
    return opened.wait(30000);
}

} // namespace

class TestCountersPane : public QObject {
    Q_OBJECT
private slots:
    void theKernelModelPassesTheModelTester() {
        const auto loaded = kwb::counters::loadNcuFiles(
            {recorded("raw.csv").toStdString(), recorded("details.csv").toStdString()});
        QVERIFY2(loaded.report, loaded.error.c_str());
        const auto baseline =
            kwb::counters::loadNcuFiles({recorded("details-base.csv").toStdString()});
        CountersKernelModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setReport(loaded.report);
        QCOMPARE(model.rowCount(), 5);
        QCOMPARE(model.index(3, CountersKernelModel::Duration).data().toString(),
                 QStringLiteral("3.50 ms"));
        QCOMPARE(model.index(3, CountersKernelModel::Roofline).data().toString(),
                 QStringLiteral("FP32 compute · 78%"));
        QCOMPARE(model.index(2, CountersKernelModel::Roofline).data().toString(),
                 QStringLiteral("FP32 memory · 72%"));
        QCOMPARE(model.index(3, CountersKernelModel::Id).data(CountersKernelModel::KernelIdRole),
                 QVariant(3));
        // A templated name is shown up to its argument list; the tooltip has all of it.
        const QModelIndex gelu = model.index(2, CountersKernelModel::Kernel);
        QVERIFY(gelu.data(Qt::ToolTipRole).toString().startsWith(gelu.data().toString() + "("));
        QCOMPARE(model.index(3, CountersKernelModel::VsBaseline).data().toString(), QString());
        model.setBaseline(baseline.report);
        // 3,495,872 ns in the baseline against 3.50 ms now.
        QCOMPARE(model.index(3, CountersKernelModel::VsBaseline).data().toString(),
                 QStringLiteral("1.00x"));
        QVERIFY(model.baselineKernelAt(1) && model.baselineKernelAt(1)->id == 1);
        model.setReport(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void aReportFillsTheTableTheDetailsAndTheRoofline() {
        EngineBridge bridge;
        CountersPane pane(&bridge);
        pane.resize(1200, 700);
        pane.show();
        QVERIFY(opens(pane, {recorded("details.csv"), recorded("raw.csv")}));
        QCOMPARE(pane.kernelModel()->rowCount(), 5);
        QVERIFY2(pane.statusText().contains(QStringLiteral("details.csv + raw.csv: 5 kernels")),
                 qPrintable(pane.statusText()));
        QCOMPARE(pane.roofline()->selectedId(), 0); // the first kernel is selected
        pane.kernelTable()->selectRow(3);
        QCOMPARE(pane.roofline()->selectedId(), 3);
        QCOMPARE(detailsValue(pane.details(), "GPU Speed Of Light Throughput", "Elapsed Cycles"),
                 QStringLiteral("5,242,782 cycle"));
        QCOMPARE(detailsValue(pane.details(), "Launch", "Grid x block"),
                 QStringLiteral("(16, 32, 1) x (256, 1, 1)"));
        const QString advice =
            detailsValue(pane.details(), "ncu's advice", "OPT TheoreticalOccupancy");
        QVERIFY2(advice.startsWith(QStringLiteral("est. 87.5% local speed-up")),
                 qPrintable(advice));

        // The matrix product right of the ridge, the GELU left of it, and the selected kernel
        // drawn in the highlight colour where the counters place it.
        const auto matmul = pane.roofline()->positionOf(346.75, 3.9324e13);
        const auto gelu = pane.roofline()->positionOf(3.368, 1.1643e13);
        const auto ridge = pane.roofline()->positionOf(10.53, 5.065e13);
        QVERIFY(matmul && gelu && ridge);
        QVERIFY(matmul->x() > ridge->x() && gelu->x() < ridge->x());
        QVERIFY(matmul->y() < gelu->y()); // more FLOP/s is higher up
        const QImage image = pane.roofline()->grab().toImage();
        const QColor highlight = pane.roofline()->palette().color(QPalette::Highlight);
        const QColor atMatmul = image.pixelColor(matmul->toPoint());
        QVERIFY2(qAbs(atMatmul.red() - highlight.red()) +
                         qAbs(atMatmul.green() - highlight.green()) +
                         qAbs(atMatmul.blue() - highlight.blue()) <
                     40,
                 qPrintable(atMatmul.name() + " vs " + highlight.name()));

        // A click on the GELU's dot selects its row.
        QTest::mouseClick(pane.roofline(), Qt::LeftButton, {}, gelu->toPoint());
        QCOMPARE(pane.kernelTable()->currentIndex().row(), 2);
        QCOMPARE(pane.roofline()->selectedId(), 2);
    }

    void aBaselineComparesAndTheCountersOfBothShow() {
        EngineBridge bridge;
        CountersPane pane(&bridge);
        QVERIFY(opens(pane, {recorded("details.csv"), recorded("raw.csv")}));
        QVERIFY(pane.kernelTable()->isColumnHidden(CountersKernelModel::VsBaseline));
        QVERIFY(opens(pane, {recorded("details-base.csv")}, true));
        QVERIFY(!pane.kernelTable()->isColumnHidden(CountersKernelModel::VsBaseline));
        QVERIFY2(pane.statusText().contains(QStringLiteral("compared with details-base.csv")),
                 qPrintable(pane.statusText()));
        pane.kernelTable()->selectRow(3);
        QCOMPARE(detailsValue(pane.details(), "GPU Speed Of Light Throughput", "Duration", 2),
                 QStringLiteral("3,495,872 ns"));
        pane.clearBaseline();
        QVERIFY(pane.kernelTable()->isColumnHidden(CountersKernelModel::VsBaseline));
        QCOMPARE(pane.kernelModel()->baseline(), nullptr);
    }

    void filesThatAreNotNcusSayWhyAndKeepWhatWasShown() {
        EngineBridge bridge;
        CountersPane pane(&bridge);
        QVERIFY(opens(pane, {recorded("details.csv")}));
        QTemporaryDir dir;
        const QString notes = dir.filePath("notes.csv");
        QFile file(notes);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("just,some\ntext,here\n");
        file.close();
        QSignalSpy opened(&pane, &CountersPane::reportOpened);
        pane.openReport({notes});
        QVERIFY(opened.wait(30000));
        QVERIFY2(opened.last().at(1).toString().contains(QStringLiteral("not `ncu --csv` output")),
                 qPrintable(opened.last().at(1).toString()));
        QVERIFY2(pane.statusText().contains(QStringLiteral("Cannot open")),
                 qPrintable(pane.statusText()));
        QCOMPARE(pane.kernelModel()->rowCount(), 5); // the report shown before stays
        pane.openReport({recorded("raw.csv")});
        QVERIFY(opened.wait(30000));
        QVERIFY2(opened.last().at(1).toString().contains(QStringLiteral("open its details page")),
                 qPrintable(opened.last().at(1).toString()));
        pane.openReport({recorded("details.csv"), recorded("details-base.csv")});
        QVERIFY(opened.wait(30000));
        QVERIFY2(opened.last().at(1).toString().contains(QStringLiteral("both files")),
                 qPrintable(opened.last().at(1).toString()));
        // Without the raw page the chart says what it needs instead of drawing nothing.
        QVERIFY(!pane.roofline()->positionOf(10, 1e12).has_value());
    }
};

QTEST_MAIN(TestCountersPane)
#include "test_counters_pane.moc"
