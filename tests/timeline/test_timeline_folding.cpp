#include "engine/timeline/kernel_timeline.h"
#include "engine/timeline/timeline_folding.h"
#include "engine/timeline/timeline_hit_test.h"
#include "engine/timeline/timeline_lane_layout.h"
#include "engine/timeline/timeline_viewport.h"
#include "tests/timeline/timeline_fixture.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace kwb;
using kwb::timeline::TimelineEvent;

namespace {

timeline::TimelineViewport viewportOf(double t0, double t1, double width = 1000.0,
                                      double extent = 0.0) {
    timeline::TimelineViewport v;
    v.setExtent(extent > 0.0 ? extent : t1);
    v.setPlotArea(0.0, width);
    v.setRange(t0, t1);
    return v;
}

std::uint64_t countedEvents(const std::vector<timeline::FoldedItem>& items) {
    std::uint64_t total = 0;
    for (const auto& item : items)
        total += item.count;
    return total;
}

// Dense uniform kernels: `n` of them, `duration` long, `period` apart.
kwb::timeline::StreamLane denseLane(std::size_t n, std::int64_t duration, std::int64_t period) {
    kwb::timeline::StreamLane lane;
    lane.events.resize(n);
    lane.maxEndPrefix.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        auto& e = lane.events[i];
        e.startNs = static_cast<std::int64_t>(i) * period;
        e.endNs = e.startNs + duration;
        lane.maxEndPrefix[i] = e.endNs;
    }
    return lane;
}

} // namespace

TEST(TimelineFolding, wideEventsStayIndividual) {
    // 10 ns per pixel: 100 ns events are 10 px wide.
    const auto lane = denseLane(100, 100, 200);
    const auto v = viewportOf(0, 10'000, 1000.0, 20'000);
    std::vector<timeline::FoldedItem> items;
    timeline::foldStreamLane(lane.events, lane.maxEndPrefix, v, timeline::kDefaultFoldPixels,
                             items);
    EXPECT_EQ(items.size(), std::size_t{51}); // events 0..50 start inside [0, 10000]
    for (std::size_t i = 0; i < items.size(); ++i) {
        EXPECT_EQ(items[i].count, 1u);
        EXPECT_EQ(items[i].firstIndex, static_cast<std::uint32_t>(i));
    }
}

TEST(TimelineFolding, narrowNeighboursFoldIntoCountedBlocksThatAddUp) {
    // 1000 ns per pixel: 100 ns events every 300 ns are far below a pixel.
    const auto lane = denseLane(10'000, 100, 300);
    const auto v = viewportOf(0, 1'000'000, 1000.0, 3'000'000);
    std::vector<timeline::FoldedItem> items;
    timeline::foldStreamLane(lane.events, lane.maxEndPrefix, v, timeline::kDefaultFoldPixels,
                             items);
    const auto [first, last] =
        kwb::timeline::visibleRange(lane.events, lane.maxEndPrefix, 0, 1'000'000);
    EXPECT_EQ(countedEvents(items), static_cast<std::uint64_t>(last - first));
    EXPECT_TRUE(items.size() < 10); // one continuous run with no visible gap
    EXPECT_TRUE(items.front().folded());
    // Blocks tile the events in order without overlap.
    for (std::size_t i = 1; i < items.size(); ++i) {
        EXPECT_EQ(items[i].firstIndex, items[i - 1].firstIndex + items[i - 1].count);
        EXPECT_TRUE(items[i].startNs >= items[i - 1].endNs);
    }
}

TEST(TimelineFolding, aVisibleGapOrAWideEventEndsABlock) {
    // Narrow, narrow, (gap of 10 px), narrow, narrow, wide, narrow. 100 ns per px.
    const auto timeline = kwb::testing::makeStreamTimeline(
        {{0, 50}, {60, 110}, {1100, 1150}, {1160, 1210}, {1220, 3220}, {3230, 3260}});
    const auto& lane = timeline->streams[0];
    const auto v = viewportOf(0, 100'000, 1000.0);
    std::vector<timeline::FoldedItem> items;
    timeline::foldStreamLane(lane.events, lane.maxEndPrefix, v, timeline::kDefaultFoldPixels,
                             items);
    EXPECT_EQ(items.size(), std::size_t{4});
    EXPECT_EQ(items[0].count, 2u);
    EXPECT_EQ(items[0].endNs, std::int64_t{110});
    EXPECT_EQ(items[1].count, 2u);
    EXPECT_EQ(items[1].firstIndex, 2u);
    EXPECT_EQ(items[2].count, 1u); // the wide one stands alone
    EXPECT_EQ(items[2].firstIndex, 4u);
    EXPECT_EQ(items[3].count, 1u);
}

TEST(TimelineFolding, oneMillionEventsFoldToAPixelBoundedList) {
    const auto lane = denseLane(1'000'000, 2'000, 5'000); // 5 s of 2 µs kernels
    std::vector<timeline::FoldedItem> items;
    for (const double width : {1920.0, 800.0}) {
        const auto all = viewportOf(0, 5e9, width);
        timeline::foldStreamLane(lane.events, lane.maxEndPrefix, all, timeline::kDefaultFoldPixels,
                                 items);
        EXPECT_EQ(countedEvents(items), std::uint64_t{1'000'000});
        EXPECT_TRUE(items.size() <=
                    static_cast<std::size_t>(2 * (width / timeline::kDefaultFoldPixels + 2)));
    }
    // Partly zoomed: still bounded, still adds up to the visible range.
    auto v = viewportOf(0, 5e9, 1920.0);
    v.setRange(1.234e9, 1.534e9);
    timeline::foldStreamLane(lane.events, lane.maxEndPrefix, v, timeline::kDefaultFoldPixels,
                             items);
    const auto [first, last] = kwb::timeline::visibleRange(lane.events, lane.maxEndPrefix,
                                                           static_cast<std::int64_t>(v.t0()),
                                                           static_cast<std::int64_t>(v.t1()));
    EXPECT_EQ(countedEvents(items), static_cast<std::uint64_t>(last - first));
    EXPECT_TRUE(items.size() <=
                static_cast<std::size_t>(2 * (1920.0 / timeline::kDefaultFoldPixels + 2)));
}

TEST(TimelineFolding, rangeRowsFoldPerDepth) {
    const auto timeline = kwb::testing::makeSyntheticTimeline(
        {.kernels = 3000, .sideStreams = 1, .iterationsPerPhase = 200});
    const auto& ranges = timeline->ranges.at(0);
    auto v = viewportOf(0, static_cast<double>(timeline->endNs), 1000.0);
    std::vector<timeline::FoldedItem> phases;
    std::vector<timeline::FoldedItem> iterations;
    timeline::foldRangeRow(ranges.events, ranges.maxEndPrefix, 0, v, timeline::kDefaultFoldPixels,
                           phases);
    timeline::foldRangeRow(ranges.events, ranges.maxEndPrefix, 1, v, timeline::kDefaultFoldPixels,
                           iterations);
    EXPECT_EQ(phases.size(), std::size_t{3});
    EXPECT_EQ(countedEvents(phases), std::uint64_t{3});
    // 5 kernels per iteration: many iterations are under two pixels and fold.
    EXPECT_EQ(countedEvents(iterations), std::uint64_t{600});
    EXPECT_TRUE(iterations.size() < 600);
}

TEST(TimelineFolding, hitTestFindsTheExactEvent) {
    const auto timeline =
        kwb::testing::makeStreamTimeline({{1000, 2000}, {3000, 4000}, {5000, 9000}}, 3);
    timeline::TimelineLaneLayout layout;
    layout.build(*timeline);
    const auto v = viewportOf(0, 10'000, 1000.0); // 10 ns per pixel
    const timeline::LaneRow& row = layout.rows()[0];
    const double y = row.top + row.height / 2.0;
    const auto hit = timeline::hitTest(*timeline, layout, v, v.xOf(3500), y);
    EXPECT_TRUE(hit.has_value());
    EXPECT_EQ(hit->eventIndex, 1u);
    EXPECT_EQ(hit->count, 1u);
    EXPECT_EQ(hit->startNs, std::int64_t{3000});
    EXPECT_EQ(timeline->streams[0].events[hit->eventIndex].nameId, 1u);
    EXPECT_EQ(timeline::hitTest(*timeline, layout, v, v.xOf(8999), y)->eventIndex, 2u);
    // One pixel outside an event still hits it (tolerance), but the middle of a gap does not.
    EXPECT_EQ(timeline::hitTest(*timeline, layout, v, v.xOf(4010), y)->eventIndex, 1u);
    EXPECT_TRUE(!timeline::hitTest(*timeline, layout, v, v.xOf(2500), y).has_value());
    // Above the lane or left of the plot: nothing.
    EXPECT_TRUE(!timeline::hitTest(*timeline, layout, v, v.xOf(3500), 3.0).has_value());
    EXPECT_TRUE(!timeline::hitTest(*timeline, layout, v, -5.0, y).has_value());
}

TEST(TimelineFolding, hitTestReportsAFoldedBlockWithCountAndSpan) {
    const auto lane = denseLane(5'000, 100, 300);
    auto timeline = std::make_shared<kwb::timeline::KernelTimeline>();
    timeline->names = {"k"};
    timeline->demangledNames = {"k"};
    timeline->streams.push_back(lane);
    timeline->endNs = lane.events.back().endNs;
    timeline::TimelineLaneLayout layout;
    layout.build(*timeline);
    const auto v = viewportOf(0, static_cast<double>(timeline->endNs), 1000.0);
    const timeline::LaneRow& row = layout.rows()[0];
    const auto hit = timeline::hitTest(*timeline, layout, v, 500.0, row.top + 5.0);
    EXPECT_TRUE(hit.has_value());
    EXPECT_TRUE(hit->folded());
    EXPECT_EQ(hit->count, 5'000u);
    EXPECT_EQ(hit->startNs, std::int64_t{0});
    EXPECT_EQ(hit->endNs, timeline->endNs);
}
