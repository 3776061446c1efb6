#include "tests/timeline/timeline_fixture.h"
#include "widgets/models/kernel_statistics_model.h"
#include "widgets/timeline/duration_histogram.h"
#include "widgets/timeline/duration_histogram_view.h"
#include "widgets/timeline/timeline_pane.h"
#include "widgets/timeline/timeline_view.h"

#include <QApplication>
#include <QImage>
#include <QLineEdit>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>
#include <QWheelEvent>

using namespace kwb;
using namespace kwb::ui;

namespace {

void sendMouse(QWidget* w, QEvent::Type type, QPointF pos, Qt::MouseButton button,
               Qt::MouseButtons buttons, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
    QMouseEvent event(type, pos, w->mapToGlobal(pos), button, buttons, modifiers);
    QApplication::sendEvent(w, &event);
}

void hover(QWidget* w, QPointF pos) {
    sendMouse(w, QEvent::MouseMove, pos, Qt::NoButton, Qt::NoButton);
}

void drag(QWidget* w, QPointF from, QPointF to, Qt::MouseButton button,
          Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
    sendMouse(w, QEvent::MouseButtonPress, from, button, button, modifiers);
    sendMouse(w, QEvent::MouseMove, (from + to) / 2.0, Qt::NoButton, button, modifiers);
    sendMouse(w, QEvent::MouseMove, to, Qt::NoButton, button, modifiers);
    sendMouse(w, QEvent::MouseButtonRelease, to, button, Qt::NoButton, modifiers);
}

void click(QWidget* w, QPointF pos) {
    drag(w, pos, pos, Qt::LeftButton);
}

QImage renderOf(QWidget& w) {
    QImage image(w.size(), QImage::Format_ARGB32);
    w.render(&image);
    return image;
}

// Two kernels on one stream, 9 ns per pixel in a 1150 px wide view (1000 px of plot).
kwb::timeline::TimelineSnapshot twoKernels() {
    return kwb::testing::makeStreamTimeline({{1000, 5000}, {6000, 9000}}, 2);
}

// One kernel, mostly 8 us, every eleventh call 40 us.
std::vector<std::pair<std::int64_t, std::int64_t>> twoHumps() {
    std::vector<std::pair<std::int64_t, std::int64_t>> spans;
    std::int64_t t = 0;
    for (int i = 0; i < 110; ++i) {
        const std::int64_t d = i % 11 == 10 ? 40'000 : 8'000;
        spans.push_back({t, t + d});
        t += d + 1'000;
    }
    return spans;
}

double rowMiddle(const TimelineView& view, std::size_t row) {
    const timeline::LaneRow& r = view.laneLayout().rows().at(row);
    return view.laneLayout().screenTop(r) + r.height / 2.0;
}

} // namespace

class TestTimelineView : public QObject {
    Q_OBJECT
private slots:
    void drawsKernelsInTheColourOfTheirName() {
        TimelineView view;
        view.resize(1150, 200);
        view.setTimeline(twoKernels());
        const auto& vp = view.viewport();
        QCOMPARE(vp.plotWidth(), 1000.0);
        const timeline::LaneRow& row = view.laneLayout().rows().at(0);
        const int y = static_cast<int>(row.top) + 3; // above the name text
        const int inK0 = static_cast<int>(vp.xOf(4500));
        const int inK1 = static_cast<int>(vp.xOf(8500));
        const int inGap = static_cast<int>(vp.xOf(5500));

        QImage image = renderOf(view);
        QCOMPARE(image.pixelColor(inK0, y), view.colorOfName(0));
        QCOMPARE(image.pixelColor(inK1, y), view.colorOfName(1));
        QVERIFY(view.colorOfName(0) != view.colorOfName(1));
        QCOMPARE(image.pixelColor(inGap, y), view.palette().color(QPalette::Base));
        // The same name gets the same colour in a different timeline (stable hash).
        TimelineView other;
        other.setTimeline(kwb::testing::makeStreamTimeline({{0, 10}}, 1));
        QCOMPARE(other.colorOfName(0), view.colorOfName(0));

        // The filter dims, then hides, the kernels that do not match.
        QVERIFY(view.setNameFilter("^k1$", TimelineView::FilterMode::Dim));
        image = renderOf(view);
        QCOMPARE(image.pixelColor(inK1, y), view.colorOfName(1));
        const QColor dimmed = image.pixelColor(inK0, y);
        QVERIFY(dimmed != view.colorOfName(0));
        QVERIFY(dimmed != view.palette().color(QPalette::Base));
        QVERIFY(view.setNameFilter("^k1$", TimelineView::FilterMode::Hide));
        image = renderOf(view);
        QCOMPARE(image.pixelColor(inK0, y), view.palette().color(QPalette::Base));
        QVERIFY(!view.setNameFilter("(", TimelineView::FilterMode::Dim)); // invalid: kept
        QVERIFY(!view.nameMatchesFilter(0));
        QVERIFY(view.setNameFilter("", TimelineView::FilterMode::Dim));
        QVERIFY(view.nameMatchesFilter(0));
    }

    void repaintsReuseFoldsOnlyForTheSameWindowAndSnapshot() {
        TimelineView view;
        view.resize(1150, 200);
        view.setTimeline(twoKernels());
        const int y = static_cast<int>(view.laneLayout().rows().at(0).top) + 3;
        const int inGap = static_cast<int>(view.viewport().xOf(5500));
        QCOMPARE(renderOf(view).pixelColor(inGap, y), view.palette().color(QPalette::Base));
        // Same extent, same window, but a kernel in the former gap: the new fold must be drawn.
        view.setTimeline(
            kwb::testing::makeStreamTimeline({{1000, 5000}, {5200, 5800}, {6000, 9000}}, 3));
        QCOMPARE(renderOf(view).pixelColor(inGap, y), view.colorOfName(1)); // span 1 is "k1"
        view.zoomToRange(0, 4000); // a new window folds again: the gap kernel is off screen
        QCOMPARE(renderOf(view).pixelColor(static_cast<int>(view.viewport().xOf(3250)), y),
                 view.colorOfName(0));
    }

    void drawsFoldedBlocksAndDroppedCounts() {
        kwb::testing::SyntheticSpec spec;
        spec.kernels = 200'000;
        spec.dropped.cuptiDropped = 12;
        TimelineView view;
        view.resize(1000, 300);
        view.setTimeline(kwb::testing::makeSyntheticTimeline(spec));
        const QImage image = renderOf(view);
        // Fully zoomed out, 200k kernels become at most a few items per pixel column.
        QVERIFY(view.lastFrameItemCount() > 10);
        QVERIFY(view.lastFrameItemCount() < 6 * 2 * 1000);
        // The dropped-record badge sits in the bottom right corner, in red.
        bool red = false;
        for (int x = 900; x < 995 && !red; ++x) {
            const QColor c = image.pixelColor(x, 300 - 12);
            red = c.red() > 150 && c.green() < 80 && c.blue() < 80;
        }
        QVERIFY(red);
        // Hovering the main stream at full zoom lands on a folded block.
        const auto mainRow = view.laneLayout().rowOf(timeline::LaneRow::Kind::Stream, 0).value();
        hover(&view, QPointF(view.viewport().xOf(view.viewport().extentNs() * 0.4),
                             rowMiddle(view, mainRow)));
        QVERIFY(view.hovered().has_value());
        QVERIFY(view.hovered()->folded());
        QVERIFY(view.hoverDetails().contains(
            QStringLiteral("%1 events folded").arg(view.hovered()->count)));
    }

    void foldedBlocksDrawHowBusyTheStreamIsAndWhatMatches() {
        // 1 ms in 1000 px: 100 ns kernels are sub-pixel and fold into one block. The first half
        // keeps the stream 25% busy, the second ~91%; names alternate k0, k1.
        std::vector<std::pair<std::int64_t, std::int64_t>> spans;
        for (std::int64_t t = 0; t < 500'000; t += 400)
            spans.push_back({t, t + 100});
        for (std::int64_t t = 500'000; t < 1'000'000; t += 110)
            spans.push_back({t, t + 100});
        TimelineView view;
        view.resize(1150, 200);
        view.setTimeline(kwb::testing::makeStreamTimeline(spans, 2));
        const timeline::LaneRow& row = view.laneLayout().rows().at(0);
        const double bottom = view.laneLayout().screenTop(row) + row.height - 1.0;
        const double boxHeight = row.height - 2.0;
        const int quiet = static_cast<int>(view.viewport().xOf(250'000));
        const int busy = static_cast<int>(view.viewport().xOf(750'000));
        const int high = static_cast<int>(bottom - 0.6 * boxHeight);
        const int low = static_cast<int>(bottom - 0.1 * boxHeight);
        QImage image = renderOf(view);
        QCOMPARE(view.lastFrameItemCount(), std::size_t(1));
        QCOMPARE(image.pixelColor(busy, high), image.pixelColor(busy, low));    // a 91% bar
        QVERIFY(image.pixelColor(quiet, high) != image.pixelColor(quiet, low)); // a 25% bar
        QCOMPARE(image.pixelColor(quiet, low), image.pixelColor(busy, low));

        // A filter shows the matching kernels' share of each bar in the highlight colour.
        QVERIFY(view.setNameFilter("^k1$", TimelineView::FilterMode::Dim));
        image = renderOf(view);
        const QColor highlight = view.palette().color(QPalette::Highlight);
        QCOMPARE(image.pixelColor(busy, low), highlight);
        QVERIFY(image.pixelColor(busy, high) != highlight); // half of 91% is below 60%
        // Hiding the others leaves only the matching share.
        QVERIFY(view.setNameFilter("^k1$", TimelineView::FilterMode::Hide));
        image = renderOf(view);
        QCOMPARE(image.pixelColor(busy, low), highlight);
        QCOMPARE(image.pixelColor(busy, high), image.pixelColor(quiet, high));
    }

    void zToZoomsToTheSelection() {
        TimelineView view;
        view.resize(1150, 200);
        view.setTimeline(
            kwb::testing::makeStreamTimeline({{1000, 1500}, {50000, 50300}, {100000, 100500}}, 1));
        view.selectStreamEvent(0, 1);
        view.resetZoom();
        QTest::keyClick(&view, Qt::Key_Z);
        // The kernel with a few microseconds either side.
        QVERIFY2(view.viewport().t0() > 45000 && view.viewport().t0() < 50000,
                 qPrintable(QString::number(view.viewport().t0())));
        QVERIFY2(view.viewport().t1() > 50300 && view.viewport().t1() < 55000,
                 qPrintable(QString::number(view.viewport().t1())));
    }

    void durationHistogramsSeparateHumpsAndListTheirInstances() {
        const auto timeline = kwb::testing::makeStreamTimeline(twoHumps(), 1);
        const DurationHistogram histogram(*timeline, 0, 48);
        QCOMPARE(histogram.instances().size(), std::size_t(110));
        QCOMPARE(histogram.minNs(), std::int64_t(8'000));
        QCOMPARE(histogram.maxNs(), std::int64_t(40'000));
        QCOMPARE(histogram.medianNs(), std::int64_t(8'000));
        const int fast = histogram.binOf(8'000);
        const int slow = histogram.binOf(40'000);
        QCOMPARE(histogram.count(fast), 100u);
        QCOMPARE(histogram.count(slow), 10u);
        for (int b = fast + 1; b < slow; ++b)
            QCOMPARE(histogram.count(b), 0u);
        const auto slowOnes = histogram.instancesIn(slow, slow);
        QCOMPARE(slowOnes.size(), std::size_t(10));
        QVERIFY(std::is_sorted(slowOnes.begin(), slowOnes.end(),
                               [](const auto& a, const auto& b) { return a.startNs < b.startNs; }));
        QCOMPARE(slowOnes.front().durationNs, std::int64_t(40'000));
        QVERIFY2(DurationHistogram(*timeline, 7, 48).empty(), "a name with no kernels");
    }

    void thePaneStepsThroughTheInstancesOfChosenBars() {
        TimelinePane pane;
        pane.resize(1400, 500);
        pane.show();
        pane.setTimeline(kwb::testing::makeStreamTimeline(twoHumps(), 1));
        QVERIFY(pane.durationHistogram()->histogram().empty());
        pane.selectStatisticsRow("k0");
        QCOMPARE(pane.durationHistogram()->name(), QString("k0"));
        const DurationHistogram& histogram = pane.durationHistogram()->histogram();
        const int slow = histogram.binOf(40'000);
        pane.durationHistogram()->selectBins(slow, slow);
        QVERIFY2(pane.instanceText().startsWith("1 of 10"), qPrintable(pane.instanceText()));
        auto selected = pane.view()->selected();
        QVERIFY(selected.has_value());
        QCOMPARE(selected->endNs - selected->startNs, std::int64_t(40'000));
        QVERIFY2(pane.view()->viewport().spanNs() < 100'000, "zoomed to the instance");
        pane.stepInstance(+1);
        QVERIFY(pane.instanceText().startsWith("2 of 10"));
        QVERIFY(pane.view()->selected()->startNs > selected->startNs);
        pane.stepInstance(-2);
        QVERIFY2(pane.instanceText().startsWith("10 of 10"), qPrintable(pane.instanceText()));
        // Selecting an instance selects its table row again; the stepping stays.
        QVERIFY(pane.durationHistogram()->selection().has_value());
    }

    void hoverShowsKernelDetailsAndClickSelects() {
        TimelineView view;
        view.resize(1150, 200);
        view.setTimeline(twoKernels());
        const QPointF onK1(view.viewport().xOf(7000), rowMiddle(view, 0));
        QSignalSpy hoverSpy(&view, &TimelineView::hoverChanged);
        hover(&view, onK1);
        QVERIFY(view.hovered().has_value());
        QCOMPARE(view.hovered()->eventIndex, 1u);
        const QString details = view.hoverDetails();
        QVERIFY2(details.startsWith("k1\n"), qPrintable(details));
        QVERIFY(details.contains("Duration: 3.000 µs"));
        QVERIFY(details.contains("Grid: (128, 1, 1)"));
        QVERIFY(details.contains("Block: (256, 1, 1) = 256 threads"));
        QVERIFY(details.contains("Registers per thread: 32"));
        QVERIFY(details.contains("Shared memory: 0 B static + 0 B dynamic"));
        QVERIFY(details.contains("Occupancy estimate (sm_90): 100.0%"));
        QCOMPARE(hoverSpy.count(), 1);
        hover(&view, QPointF(view.viewport().xOf(5500), rowMiddle(view, 0)));
        QVERIFY(!view.hovered().has_value());
        QVERIFY(view.hoverDetails().isEmpty());

        QSignalSpy selected(&view, &TimelineView::eventSelected);
        click(&view, onK1);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(view.selected()->eventIndex, 1u);
        const QImage image = renderOf(view);
        QCOMPARE(image.pixelColor(static_cast<int>(view.viewport().xOf(7500)),
                                  static_cast<int>(view.laneLayout().rows()[0].top)),
                 view.palette().color(QPalette::Highlight));
    }

    void navigatesWithWheelKeysAndRangeSelection() {
        TimelineView view;
        view.resize(1150, 200);
        view.setTimeline(kwb::testing::makeSyntheticTimeline({.kernels = 5000}));
        const auto& vp = view.viewport();
        const double extent = vp.extentNs();
        QSignalSpy ranges(&view, &TimelineView::viewRangeChanged);

        const QPointF cursor(700.0, 80.0);
        const double anchor = vp.timeAt(cursor.x());
        QWheelEvent wheel(cursor, view.mapToGlobal(cursor), QPoint(), QPoint(0, 240), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(&view, &wheel);
        QVERIFY(qAbs(vp.spanNs() - extent / 1.5625) < 1.0);
        QVERIFY(qAbs(vp.timeAt(cursor.x()) - anchor) < 1.0);
        QCOMPARE(ranges.count(), 1);

        const double span = vp.spanNs();
        QTest::keyClick(&view, Qt::Key_W);
        QVERIFY(qAbs(vp.spanNs() - span / 1.25) < 1.0);
        const double t0 = vp.t0();
        QTest::keyClick(&view, Qt::Key_D);
        QVERIFY(vp.t0() > t0);
        QTest::keyClick(&view, Qt::Key_A);
        QVERIFY(qAbs(vp.t0() - t0) < 1.0);

        // Left-drag pans: dragging 100 px right shows 100 px worth of earlier time.
        const double before = vp.t0();
        const double nsPerPixel = vp.nsPerPixel();
        drag(&view, QPointF(600, 80), QPointF(700, 80), Qt::LeftButton);
        QVERIFY(qAbs((before - vp.t0()) - 100.0 * nsPerPixel) < 1.0);

        // Right-drag zooms to the selection; Backspace returns; Home shows everything.
        const double a = vp.timeAt(400.0);
        const double b = vp.timeAt(600.0);
        drag(&view, QPointF(400, 80), QPointF(600, 80), Qt::RightButton);
        QVERIFY(qAbs(vp.t0() - a) < 1.0);
        QVERIFY(qAbs(vp.t1() - b) < 1.0);
        QTest::keyClick(&view, Qt::Key_Backspace);
        QVERIFY(qAbs(vp.t0() - before + 100.0 * nsPerPixel) < 1.0);
        QTest::keyClick(&view, Qt::Key_Home);
        QCOMPARE(vp.spanNs(), extent);
    }

    void measuresBetweenTwoPoints() {
        TimelineView view;
        view.resize(1150, 200);
        view.setTimeline(twoKernels());
        QSignalSpy measured(&view, &TimelineView::measurementChanged);
        drag(&view, QPointF(view.viewport().xOf(1000), 100),
             QPointF(view.viewport().xOf(4000), 100), Qt::LeftButton, Qt::ShiftModifier);
        QVERIFY(view.measurement().has_value());
        QVERIFY(qAbs(view.measurement()->second - view.measurement()->first - 3000.0) < 1.0);
        QCOMPARE(measured.count(), 1);
        QCOMPARE(view.viewport().spanNs(), 9000.0); // measuring does not pan

        QTest::keyClick(&view, Qt::Key_M);
        QVERIFY(!view.measurement().has_value());
        click(&view, QPointF(view.viewport().xOf(8000), 100));
        click(&view, QPointF(view.viewport().xOf(2000), 100));
        QVERIFY(qAbs(view.measurement()->second - view.measurement()->first - 6000.0) < 1.0);
        QCOMPARE(measured.count(), 2);
        QVERIFY(!view.selected().has_value()); // measure clicks do not select
    }

    void paneShowsEmptyStateStatisticsSelectionAndComparison() {
        TimelinePane pane;
        pane.resize(1400, 500);
        pane.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pane));
        QVERIFY(pane.showsEmptyState());

        kwb::testing::SyntheticSpec spec;
        spec.kernels = 3000;
        const auto current = kwb::testing::makeSyntheticTimeline(spec);
        pane.setTimeline(current);
        QVERIFY(!pane.showsEmptyState());
        QVERIFY(!pane.comparing());
        QCOMPARE(pane.statisticsModel()->rowCount(), 8);
        QVERIFY(pane.statusText().contains(QLocale().toString(3000) + " kernels"));
        QVERIFY(pane.statusText().contains("no dropped records"));

        QSignalSpy kernels(&pane, &TimelinePane::kernelSelected);
        pane.selectKernel(0, 5);
        QCOMPARE(kernels.count(), 1);
        const auto& event = current->streams[0].events[5];
        QCOMPARE(kernels.at(0).at(0).toString(),
                 QString::fromStdString(current->displayName(event.nameId)));
        QCOMPARE(kernels.at(0).at(2).toUInt(), 5u);
        QVERIFY(pane.detailsText().contains("Occupancy estimate"));
        QVERIFY(pane.view()->viewport().t0() <= static_cast<double>(event.startNs));
        QVERIFY(pane.view()->viewport().t1() >= static_cast<double>(event.endNs));

        // Search filters the view and the statistics table alike.
        pane.setSearchPattern("triton");
        QCOMPARE(pane.statisticsProxy()->rowCount(), 2);
        QVERIFY(!pane.view()->nameMatchesFilter(event.nameId) ||
                QString::fromStdString(current->displayName(event.nameId)).contains("triton"));
        pane.selectKernelName("tiny_memset(float*, int)");
        QCOMPARE(pane.statisticsProxy()->rowCount(), 1);
        pane.setSearchPattern("");

        // Compare: a second run below, on the same time axis as the first.
        kwb::testing::SyntheticSpec longer = spec;
        longer.kernels = 4500;
        longer.dropped.bufferOverflow = 3;
        const auto reference = kwb::testing::makeSyntheticTimeline(longer);
        pane.setComparison(reference);
        QVERIFY(pane.comparing());
        QCOMPARE(pane.view()->viewport().extentNs(), static_cast<double>(reference->endNs));
        QVERIFY(pane.statusText().contains("reference dropped 3"));
        QSignalSpy rangeSpy(&pane, &TimelinePane::timeRangeChanged);
        pane.showTimeRange(1'000'000, 2'000'000);
        QCOMPARE(rangeSpy.count(), 1);
        QCOMPARE(pane.comparisonView()->viewport().t0(), 1'000'000.0);
        QCOMPARE(pane.comparisonView()->viewport().t1(), 2'000'000.0);
        pane.setComparison(nullptr);
        QVERIFY(!pane.comparing());
        pane.setTimeline(nullptr);
        QVERIFY(pane.showsEmptyState());
    }
};

QTEST_MAIN(TestTimelineView)
#include "test_timeline_view.moc"
