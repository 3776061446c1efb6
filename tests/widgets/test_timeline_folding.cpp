#include "engine/timeline/kernel_timeline.h"
#include "tests/widgets/timeline_fixture.h"
#include "widgets/timeline_folding.h"
#include "widgets/timeline_hit_test.h"
#include "widgets/timeline_lane_layout.h"
#include "widgets/timeline_viewport.h"

#include <QTest>

using namespace kwb::ui;
using kwb::timeline::TimelineEvent;

namespace {

TimelineViewport viewportOf(double t0, double t1, double width = 1000.0, double extent = 0.0) {
    TimelineViewport v;
    v.setExtent(extent > 0.0 ? extent : t1);
    v.setPlotArea(0.0, width);
    v.setRange(t0, t1);
    return v;
}

std::uint64_t countedEvents(const std::vector<FoldedItem>& items) {
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

class TestTimelineFolding : public QObject {
    Q_OBJECT
private slots:
    void wideEventsStayIndividual() {
        // 10 ns per pixel: 100 ns events are 10 px wide.
        const auto lane = denseLane(100, 100, 200);
        const auto v = viewportOf(0, 10'000, 1000.0, 20'000);
        std::vector<FoldedItem> items;
        foldStreamLane(lane.events, lane.maxEndPrefix, v, kDefaultFoldPixels, items);
        QCOMPARE(items.size(), std::size_t{51}); // events 0..50 start inside [0, 10000]
        for (std::size_t i = 0; i < items.size(); ++i) {
            QCOMPARE(items[i].count, 1u);
            QCOMPARE(items[i].firstIndex, static_cast<std::uint32_t>(i));
        }
    }

    void narrowNeighboursFoldIntoCountedBlocksThatAddUp() {
        // 1000 ns per pixel: 100 ns events every 300 ns are far below a pixel.
        const auto lane = denseLane(10'000, 100, 300);
        const auto v = viewportOf(0, 1'000'000, 1000.0, 3'000'000);
        std::vector<FoldedItem> items;
        foldStreamLane(lane.events, lane.maxEndPrefix, v, kDefaultFoldPixels, items);
        const auto [first, last] =
            kwb::timeline::visibleRange(lane.events, lane.maxEndPrefix, 0, 1'000'000);
        QCOMPARE(countedEvents(items), static_cast<std::uint64_t>(last - first));
        QVERIFY(items.size() < 10); // one continuous run with no visible gap
        QVERIFY(items.front().folded());
        // Blocks tile the events in order without overlap.
        for (std::size_t i = 1; i < items.size(); ++i) {
            QCOMPARE(items[i].firstIndex, items[i - 1].firstIndex + items[i - 1].count);
            QVERIFY(items[i].startNs >= items[i - 1].endNs);
        }
    }

    void aVisibleGapOrAWideEventEndsABlock() {
        // Narrow, narrow, (gap of 10 px), narrow, narrow, wide, narrow. 100 ns per px.
        const auto timeline = kwb::testing::makeStreamTimeline(
            {{0, 50}, {60, 110}, {1100, 1150}, {1160, 1210}, {1220, 3220}, {3230, 3260}});
        const auto& lane = timeline->streams[0];
        const auto v = viewportOf(0, 100'000, 1000.0);
        std::vector<FoldedItem> items;
        foldStreamLane(lane.events, lane.maxEndPrefix, v, kDefaultFoldPixels, items);
        QCOMPARE(items.size(), std::size_t{4});
        QCOMPARE(items[0].count, 2u);
        QCOMPARE(items[0].endNs, std::int64_t{110});
        QCOMPARE(items[1].count, 2u);
        QCOMPARE(items[1].firstIndex, 2u);
        QCOMPARE(items[2].count, 1u); // the wide one stands alone
        QCOMPARE(items[2].firstIndex, 4u);
        QCOMPARE(items[3].count, 1u);
    }

    void oneMillionEventsFoldToAPixelBoundedList() {
        const auto lane = denseLane(1'000'000, 2'000, 5'000); // 5 s of 2 µs kernels
        std::vector<FoldedItem> items;
        for (const double width : {1920.0, 800.0}) {
            const auto all = viewportOf(0, 5e9, width);
            foldStreamLane(lane.events, lane.maxEndPrefix, all, kDefaultFoldPixels, items);
            QCOMPARE(countedEvents(items), std::uint64_t{1'000'000});
            QVERIFY(items.size() <= static_cast<std::size_t>(2 * (width / kDefaultFoldPixels + 2)));
        }
        // Partly zoomed: still bounded, still adds up to the visible range.
        auto v = viewportOf(0, 5e9, 1920.0);
        v.setRange(1.234e9, 1.534e9);
        foldStreamLane(lane.events, lane.maxEndPrefix, v, kDefaultFoldPixels, items);
        const auto [first, last] = kwb::timeline::visibleRange(lane.events, lane.maxEndPrefix,
                                                               static_cast<std::int64_t>(v.t0()),
                                                               static_cast<std::int64_t>(v.t1()));
        QCOMPARE(countedEvents(items), static_cast<std::uint64_t>(last - first));
        QVERIFY(items.size() <= static_cast<std::size_t>(2 * (1920.0 / kDefaultFoldPixels + 2)));
    }

    void rangeRowsFoldPerDepth() {
        const auto timeline = kwb::testing::makeSyntheticTimeline(
            {.kernels = 3000, .sideStreams = 1, .iterationsPerPhase = 200});
        const auto& ranges = timeline->ranges.at(0);
        auto v = viewportOf(0, static_cast<double>(timeline->endNs), 1000.0);
        std::vector<FoldedItem> phases;
        std::vector<FoldedItem> iterations;
        foldRangeRow(ranges.events, ranges.maxEndPrefix, 0, v, kDefaultFoldPixels, phases);
        foldRangeRow(ranges.events, ranges.maxEndPrefix, 1, v, kDefaultFoldPixels, iterations);
        QCOMPARE(phases.size(), std::size_t{3});
        QCOMPARE(countedEvents(phases), std::uint64_t{3});
        // 5 kernels per iteration: many iterations are under two pixels and fold.
        QCOMPARE(countedEvents(iterations), std::uint64_t{600});
        QVERIFY(iterations.size() < 600);
    }

    void hitTestFindsTheExactEvent() {
        const auto timeline =
            kwb::testing::makeStreamTimeline({{1000, 2000}, {3000, 4000}, {5000, 9000}}, 3);
        TimelineLaneLayout layout;
        layout.build(*timeline);
        const auto v = viewportOf(0, 10'000, 1000.0); // 10 ns per pixel
        const LaneRow& row = layout.rows()[0];
        const double y = row.top + row.height / 2.0;
        const auto hit = hitTest(*timeline, layout, v, v.xOf(3500), y);
        QVERIFY(hit.has_value());
        QCOMPARE(hit->eventIndex, 1u);
        QCOMPARE(hit->count, 1u);
        QCOMPARE(hit->startNs, std::int64_t{3000});
        QCOMPARE(timeline->streams[0].events[hit->eventIndex].nameId, 1u);
        QCOMPARE(hitTest(*timeline, layout, v, v.xOf(8999), y)->eventIndex, 2u);
        // One pixel outside an event still hits it (tolerance), but the middle of a gap does not.
        QCOMPARE(hitTest(*timeline, layout, v, v.xOf(4010), y)->eventIndex, 1u);
        QVERIFY(!hitTest(*timeline, layout, v, v.xOf(2500), y).has_value());
        // Above the lane or left of the plot: nothing.
        QVERIFY(!hitTest(*timeline, layout, v, v.xOf(3500), 3.0).has_value());
        QVERIFY(!hitTest(*timeline, layout, v, -5.0, y).has_value());
    }

    void hitTestReportsAFoldedBlockWithCountAndSpan() {
        const auto lane = denseLane(5'000, 100, 300);
        auto timeline = std::make_shared<kwb::timeline::KernelTimeline>();
        timeline->names = {"k"};
        timeline->demangledNames = {"k"};
        timeline->streams.push_back(lane);
        timeline->endNs = lane.events.back().endNs;
        TimelineLaneLayout layout;
        layout.build(*timeline);
        const auto v = viewportOf(0, static_cast<double>(timeline->endNs), 1000.0);
        const LaneRow& row = layout.rows()[0];
        const auto hit = hitTest(*timeline, layout, v, 500.0, row.top + 5.0);
        QVERIFY(hit.has_value());
        QVERIFY(hit->folded());
        QCOMPARE(hit->count, 5'000u);
        QCOMPARE(hit->startNs, std::int64_t{0});
        QCOMPARE(hit->endNs, timeline->endNs);
    }
};

QTEST_GUILESS_MAIN(TestTimelineFolding)
#include "test_timeline_folding.moc"
