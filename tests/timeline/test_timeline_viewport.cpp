#include "engine/timeline/timeline_lane_layout.h"
#include "engine/timeline/timeline_viewport.h"
#include "tests/timeline/timeline_fixture.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace kwb;

namespace {
timeline::TimelineViewport viewport(double extent = 1'000'000.0) {
    timeline::TimelineViewport v;
    v.setExtent(extent);
    v.setPlotArea(100.0, 1000.0);
    return v;
}
} // namespace

TEST(TimelineViewport, mapsPixelsAndTimeBothWays) {
    timeline::TimelineViewport v = viewport();
    EXPECT_EQ(v.nsPerPixel(), 1000.0);
    EXPECT_EQ(v.xOf(0.0), 100.0);
    EXPECT_EQ(v.xOf(1'000'000.0), 1100.0);
    EXPECT_EQ(v.timeAt(600.0), 500'000.0);
    v.setRange(200'000.0, 300'000.0);
    EXPECT_EQ(v.timeAt(100.0), 200'000.0);
    EXPECT_EQ(v.xOf(250'000.0), 600.0);
}

TEST(TimelineViewport, wheelZoomKeepsTheTimeUnderTheCursor) {
    timeline::TimelineViewport v = viewport();
    for (const double x : {130.0, 437.0, 900.0}) {
        v.setRange(200'000.0, 600'000.0);
        const double before = v.timeAt(x);
        v.zoomAt(x, 1.25);
        EXPECT_TRUE(std::abs(v.timeAt(x) - before) < 1e-6);
        EXPECT_TRUE(std::abs(v.spanNs() - 400'000.0 / 1.25) < 1e-6);
        v.zoomAt(x, 0.5);
        EXPECT_TRUE(std::abs(v.timeAt(x) - before) < 1e-6);
    }
    // Zooming far in stops at the minimum span, still around the cursor.
    v.setRange(200'000.0, 600'000.0);
    const double anchor = v.timeAt(600.0);
    for (int i = 0; i < 200; ++i)
        v.zoomAt(600.0, 2.0);
    EXPECT_EQ(v.spanNs(), timeline::TimelineViewport::kMinimumSpanNs);
    EXPECT_TRUE(std::abs(v.timeAt(600.0) - anchor) < 1.0);
}

TEST(TimelineViewport, zoomOutAndPanClampToTheExtent) {
    timeline::TimelineViewport v = viewport();
    v.zoomAt(400.0, 0.01);
    EXPECT_EQ(v.t0(), 0.0);
    EXPECT_EQ(v.t1(), 1'000'000.0);
    v.setRange(100'000.0, 200'000.0);
    v.panByPixels(-300.0); // drag left: later times, 100 ns per pixel
    EXPECT_EQ(v.t0(), 130'000.0);
    EXPECT_EQ(v.spanNs(), 100'000.0);
    v.panByPixels(1e6); // far right drag: clamps at the start
    EXPECT_EQ(v.t0(), 0.0);
    EXPECT_EQ(v.t1(), 100'000.0);
    v.panByFraction(100.0);
    EXPECT_EQ(v.t1(), 1'000'000.0);
    EXPECT_EQ(v.t0(), 900'000.0);
    v.setRange(-50.0, 2e9);
    EXPECT_EQ(v.t0(), 0.0);
    EXPECT_EQ(v.t1(), 1'000'000.0);
}

TEST(TimelineViewport, tinyRangeSelectionGrowsAroundItsCentre) {
    timeline::TimelineViewport v = viewport();
    v.zoomToRange(500'002.0, 500'004.0);
    EXPECT_EQ(v.spanNs(), timeline::TimelineViewport::kMinimumSpanNs);
    EXPECT_EQ((v.t0() + v.t1()) / 2.0, 500'003.0);
}

TEST(TimelineViewport, zoomStackGoesBackAndResets) {
    timeline::TimelineViewport v = viewport();
    EXPECT_TRUE(!v.canGoBack());
    v.zoomToRange(100'000.0, 500'000.0);
    v.zoomToRange(200'000.0, 300'000.0);
    v.zoomAt(500.0, 2.0); // wheel zoom does not push
    EXPECT_EQ(v.stackDepth(), std::size_t{2});
    v.back();
    EXPECT_EQ(v.t0(), 100'000.0);
    EXPECT_EQ(v.t1(), 500'000.0);
    v.back();
    EXPECT_EQ(v.t0(), 0.0);
    EXPECT_EQ(v.t1(), 1'000'000.0);
    EXPECT_TRUE(!v.canGoBack());
    v.back(); // harmless when empty
    EXPECT_EQ(v.t1(), 1'000'000.0);
    v.zoomToRange(1.0, 1000.0);
    v.reset();
    EXPECT_TRUE(!v.canGoBack());
    EXPECT_EQ(v.spanNs(), 1'000'000.0);
}

TEST(TimelineViewport, laysOutRangeRowsAboveStreamLanes) {
    const auto timeline = kwb::testing::makeSyntheticTimeline({.kernels = 600});
    timeline::TimelineLaneLayout layout;
    layout.build(*timeline);
    // One NVTX lane with phases (depth 0) and iterations (depth 1), then four streams.
    EXPECT_EQ(layout.rows().size(), std::size_t{2 + 4});
    EXPECT_EQ(layout.rows()[0].kind, timeline::LaneRow::Kind::Range);
    EXPECT_EQ(layout.rows()[1].depth, 1);
    EXPECT_TRUE(!layout.rows()[1].firstOfLane);
    EXPECT_EQ(layout.rows()[2].kind, timeline::LaneRow::Kind::Stream);
    for (std::size_t i = 1; i < layout.rows().size(); ++i)
        EXPECT_TRUE(layout.rows()[i].top >= layout.rows()[i - 1].top + layout.rows()[i - 1].height);

    const timeline::LaneRow& stream2 = layout.rows()[4];
    EXPECT_EQ(layout.rowAt(stream2.top + 3.0), std::optional<std::size_t>{4});
    EXPECT_EQ(layout.rowAt(stream2.top - 1.0), std::nullopt); // the gap between lanes
    EXPECT_EQ(layout.rowAt(5.0), std::nullopt);               // the ruler
    EXPECT_EQ(layout.rowOf(timeline::LaneRow::Kind::Stream, 2), std::optional<std::size_t>{4});

    // Scrolling moves rows under the ruler but never past the content.
    layout.setScroll(40.0, 100.0);
    EXPECT_EQ(layout.scrollY(), 40.0);
    EXPECT_EQ(layout.rowAt(stream2.top - 40.0 + 3.0), std::optional<std::size_t>{4});
    layout.setScroll(1e6, 100.0);
    EXPECT_EQ(layout.scrollY(), layout.contentHeight() - 100.0);
    layout.setScroll(-5.0, 100.0);
    EXPECT_EQ(layout.scrollY(), 0.0);
}
