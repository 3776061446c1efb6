#include "tests/widgets/timeline_fixture.h"
#include "widgets/timeline_lane_layout.h"
#include "widgets/timeline_viewport.h"

#include <QTest>

using namespace kwb::ui;

namespace {
TimelineViewport viewport(double extent = 1'000'000.0) {
    TimelineViewport v;
    v.setExtent(extent);
    v.setPlotArea(100.0, 1000.0);
    return v;
}
} // namespace

class TestTimelineViewport : public QObject {
    Q_OBJECT
private slots:
    void mapsPixelsAndTimeBothWays() {
        TimelineViewport v = viewport();
        QCOMPARE(v.nsPerPixel(), 1000.0);
        QCOMPARE(v.xOf(0.0), 100.0);
        QCOMPARE(v.xOf(1'000'000.0), 1100.0);
        QCOMPARE(v.timeAt(600.0), 500'000.0);
        v.setRange(200'000.0, 300'000.0);
        QCOMPARE(v.timeAt(100.0), 200'000.0);
        QCOMPARE(v.xOf(250'000.0), 600.0);
    }

    void wheelZoomKeepsTheTimeUnderTheCursor() {
        TimelineViewport v = viewport();
        for (const double x : {130.0, 437.0, 900.0}) {
            v.setRange(200'000.0, 600'000.0);
            const double before = v.timeAt(x);
            v.zoomAt(x, 1.25);
            QVERIFY(qAbs(v.timeAt(x) - before) < 1e-6);
            QVERIFY(qAbs(v.spanNs() - 400'000.0 / 1.25) < 1e-6);
            v.zoomAt(x, 0.5);
            QVERIFY(qAbs(v.timeAt(x) - before) < 1e-6);
        }
        // Zooming far in stops at the minimum span, still around the cursor.
        v.setRange(200'000.0, 600'000.0);
        const double anchor = v.timeAt(600.0);
        for (int i = 0; i < 200; ++i)
            v.zoomAt(600.0, 2.0);
        QCOMPARE(v.spanNs(), TimelineViewport::kMinimumSpanNs);
        QVERIFY(qAbs(v.timeAt(600.0) - anchor) < 1.0);
    }

    void zoomOutAndPanClampToTheExtent() {
        TimelineViewport v = viewport();
        v.zoomAt(400.0, 0.01);
        QCOMPARE(v.t0(), 0.0);
        QCOMPARE(v.t1(), 1'000'000.0);
        v.setRange(100'000.0, 200'000.0);
        v.panByPixels(-300.0); // drag left: later times, 100 ns per pixel
        QCOMPARE(v.t0(), 130'000.0);
        QCOMPARE(v.spanNs(), 100'000.0);
        v.panByPixels(1e6); // far right drag: clamps at the start
        QCOMPARE(v.t0(), 0.0);
        QCOMPARE(v.t1(), 100'000.0);
        v.panByFraction(100.0);
        QCOMPARE(v.t1(), 1'000'000.0);
        QCOMPARE(v.t0(), 900'000.0);
        v.setRange(-50.0, 2e9);
        QCOMPARE(v.t0(), 0.0);
        QCOMPARE(v.t1(), 1'000'000.0);
    }

    void tinyRangeSelectionGrowsAroundItsCentre() {
        TimelineViewport v = viewport();
        v.zoomToRange(500'002.0, 500'004.0);
        QCOMPARE(v.spanNs(), TimelineViewport::kMinimumSpanNs);
        QCOMPARE((v.t0() + v.t1()) / 2.0, 500'003.0);
    }

    void zoomStackGoesBackAndResets() {
        TimelineViewport v = viewport();
        QVERIFY(!v.canGoBack());
        v.zoomToRange(100'000.0, 500'000.0);
        v.zoomToRange(200'000.0, 300'000.0);
        v.zoomAt(500.0, 2.0); // wheel zoom does not push
        QCOMPARE(v.stackDepth(), std::size_t{2});
        v.back();
        QCOMPARE(v.t0(), 100'000.0);
        QCOMPARE(v.t1(), 500'000.0);
        v.back();
        QCOMPARE(v.t0(), 0.0);
        QCOMPARE(v.t1(), 1'000'000.0);
        QVERIFY(!v.canGoBack());
        v.back(); // harmless when empty
        QCOMPARE(v.t1(), 1'000'000.0);
        v.zoomToRange(1.0, 1000.0);
        v.reset();
        QVERIFY(!v.canGoBack());
        QCOMPARE(v.spanNs(), 1'000'000.0);
    }

    void laysOutRangeRowsAboveStreamLanes() {
        const auto timeline = kwb::testing::makeSyntheticTimeline({.kernels = 600});
        TimelineLaneLayout layout;
        layout.build(*timeline);
        // One NVTX lane with phases (depth 0) and iterations (depth 1), then four streams.
        QCOMPARE(layout.rows().size(), std::size_t{2 + 4});
        QCOMPARE(layout.rows()[0].kind, LaneRow::Kind::Range);
        QCOMPARE(layout.rows()[1].depth, 1);
        QVERIFY(!layout.rows()[1].firstOfLane);
        QCOMPARE(layout.rows()[2].kind, LaneRow::Kind::Stream);
        for (std::size_t i = 1; i < layout.rows().size(); ++i)
            QVERIFY(layout.rows()[i].top >= layout.rows()[i - 1].top + layout.rows()[i - 1].height);

        const LaneRow& stream2 = layout.rows()[4];
        QCOMPARE(layout.rowAt(stream2.top + 3.0), std::optional<std::size_t>{4});
        QCOMPARE(layout.rowAt(stream2.top - 1.0), std::nullopt); // the gap between lanes
        QCOMPARE(layout.rowAt(5.0), std::nullopt);               // the ruler
        QCOMPARE(layout.rowOf(LaneRow::Kind::Stream, 2), std::optional<std::size_t>{4});

        // Scrolling moves rows under the ruler but never past the content.
        layout.setScroll(40.0, 100.0);
        QCOMPARE(layout.scrollY(), 40.0);
        QCOMPARE(layout.rowAt(stream2.top - 40.0 + 3.0), std::optional<std::size_t>{4});
        layout.setScroll(1e6, 100.0);
        QCOMPARE(layout.scrollY(), layout.contentHeight() - 100.0);
        layout.setScroll(-5.0, 100.0);
        QCOMPARE(layout.scrollY(), 0.0);
    }
};

QTEST_GUILESS_MAIN(TestTimelineViewport)
#include "test_timeline_viewport.moc"
