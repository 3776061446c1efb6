// The Counters pane on Nsight Compute output recorded on the H200 (tests/data/ncu): the kernel
// table (checked by Qt's model tester), the selected kernel's metrics and advice, the roofline
// drawn where the counters put each kernel, a baseline to compare with, and files that are not
// ncu's. Collecting on demand: offered only with a GPU (and why not, without), the dialog's
// choices, and the main window's answer on a machine without a GPU.
#include "engine/counters/ncu_files.h"
#include "widgets/core/app_settings.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/counters/collect_counters_dialog.h"
#include "widgets/counters/counters_kernel_model.h"
#include "widgets/counters/counters_pane.h"
#include "widgets/counters/roofline_chart.h"
#include "widgets/window/edit_loop_controller.h"
#include "widgets/window/main_window.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QImage>
#include <QLineEdit>
#include <QPushButton>
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

    // At 1366x768 the chart is about 680 x 130 px; there the ridge's label used to print over
    // the selected kernel's. Every label now stays inside the chart, clear of the other label
    // and of every dot, for each kernel selected and at short and tall sizes.
    void theLabelsDoNotOverlapOnAShortChart() {
        EngineBridge bridge;
        CountersPane pane(&bridge);
        pane.resize(1200, 700);
        pane.show();
        QVERIFY(opens(pane, {recorded("details.csv"), recorded("raw.csv")}));
        RooflineChart* chart = pane.roofline();
        const QList<std::pair<double, double>> dots = {
            {346.75, 3.9324e13}, {3.368, 1.1643e13}}; // two of the report's kernels
        for (const QSize size : {QSize(680, 130), QSize(420, 280), QSize(1000, 400)}) {
            chart->setFixedSize(size);
            for (int id = 0; id < pane.kernelModel()->rowCount(); ++id) {
                pane.kernelTable()->selectRow(id);
                const auto labels = chart->labels();
                const QString where =
                    QStringLiteral("%1x%2, kernel %3").arg(size.width()).arg(size.height()).arg(id);
                QCOMPARE(labels.size(), std::size_t(2)); // the selected kernel's and the ridge's
                QVERIFY2(labels[0].text.startsWith(QStringLiteral("[%1] ").arg(id)),
                         qPrintable(labels[0].text));
                QVERIFY2(labels[1].text.startsWith(QStringLiteral("ridge ")),
                         qPrintable(labels[1].text));
                QVERIFY2(!labels[0].rect.intersects(labels[1].rect), qPrintable(where));
                for (const auto& label : labels) {
                    QVERIFY2(QRectF(chart->rect()).contains(label.rect),
                             qPrintable(where + ": " + label.text));
                    for (const auto& [intensity, flops] : dots) {
                        const QPointF at = *chart->positionOf(intensity, flops);
                        QVERIFY2(!label.rect.contains(at), qPrintable(where + ": " + label.text));
                    }
                }
            }
        }
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

    void collectingIsOfferedWithAGpuAndTheDialogSaysWhatItRuns() {
        EngineBridge bridge;
        CountersPane pane(&bridge);
        pane.setCollectPossible(false, QStringLiteral("needs an NVIDIA GPU"));
        QVERIFY(!pane.collectButton()->isEnabled());
        QCOMPARE(pane.collectButton()->toolTip(), QStringLiteral("needs an NVIDIA GPU"));
        pane.setCollectPossible(true, {});
        QVERIFY(pane.collectButton()->isEnabled());
        // The timeline's kernel, as CUPTI names it, becomes ncu's name filter.
        pane.setKernelHint(QStringLiteral("void gelu_kernel<float>(float const*, float*, int)"));
        QCOMPARE(pane.kernelHint(), QStringLiteral("gelu_kernel"));
        pane.setKernelHint(QStringLiteral("ampere_sgemm_128x64_nn"));
        QCOMPARE(pane.kernelHint(), QStringLiteral("ampere_sgemm_128x64_nn"));
        pane.setKernelHint(QStringLiteral("at::native::vectorized_elementwise_kernel<4>(int)"));
        QCOMPARE(pane.kernelHint(), QStringLiteral("at::native::vectorized_elementwise_kernel"));
        pane.setKernelHint(QStringLiteral("kernel.v2"));
        QCOMPARE(pane.kernelHint(), QStringLiteral("kernel\\.v2"));

        CollectCountersDialog dialog(QStringLiteral("/ws"), pane.kernelHint());
        kwb::CounterCollection choice = dialog.choice();
        QCOMPARE(choice.sections, kwb::kDefaultNcuSections);
        QVERIFY(choice.ownKernelsOnly);
        QCOMPARE(QString::fromStdString(choice.kernelRegex), pane.kernelHint());
        QVERIFY(dialog.problem().isEmpty());
        choice.sections.clear();
        dialog.setChoice(choice);
        QVERIFY(dialog.problem().contains("at least one section"));
        choice.sections = {"Occupancy", "LaunchStats"};
        choice.kernelRegex = "gelu(";
        dialog.setChoice(choice);
        QVERIFY(dialog.problem().contains("not a regular expression"));
        choice.kernelRegex = "gelu";
        choice.launchCount = 7;
        choice.ownKernelsOnly = false;
        dialog.setChoice(choice);
        QVERIFY(dialog.problem().isEmpty());
        const kwb::CounterCollection back = dialog.choice();
        QCOMPARE(back.sections, (std::vector<std::string>{"Occupancy", "LaunchStats"}));
        QCOMPARE(back.launchCount, 7);
        QVERIFY(!back.ownKernelsOnly);
    }

    void withoutAGpuTheWindowSaysCollectingNeedsOne() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        QTRY_VERIFY_WITH_TIMEOUT(window.hasSystemReport(), 120000);
        if (window.systemReport()->gpus.hasGpu())
            QSKIP("this machine has a GPU: collecting is offered");
        QPushButton* collect = window.countersPane()->collectButton();
        QVERIFY(!collect->isEnabled());
        QVERIFY2(collect->toolTip().contains("needs an NVIDIA GPU"),
                 qPrintable(collect->toolTip()));
        // Asked anyway (a request arriving from elsewhere), with no workspace open, it says so.
        emit window.countersPane()->collectRequested(kwb::CounterCollection{});
        QVERIFY2(window.countersPane()->statusText().contains("Open a workspace"),
                 qPrintable(window.countersPane()->statusText()));
    }

    void aSecondCollectionIsComparedWithTheFirst() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        CountersPane* pane = window.countersPane();
        // What the edit loop reports after two runs under ncu (recorded pages stand in).
        emit window.editLoop()->countersCollected(recorded("details-base.csv"), {}, {});
        QTRY_COMPARE_WITH_TIMEOUT(pane->kernelModel()->rowCount(), 5, 30000);
        QVERIFY(pane->details()->isColumnHidden(2)); // nothing to compare with yet
        emit window.editLoop()->countersCollected(recorded("details.csv"), recorded("raw.csv"), {});
        QTRY_VERIFY_WITH_TIMEOUT(!pane->details()->isColumnHidden(2), 30000);
        // A run that gave none says why and keeps what is shown.
        emit window.editLoop()->countersCollected({}, {}, QStringLiteral("no kernel matched"));
        QVERIFY(pane->statusText().contains("no kernel matched"));
        QCOMPARE(pane->kernelModel()->rowCount(), 5);
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
