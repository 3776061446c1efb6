// The per-column density of folded stream lanes: counts, busy shares and filter matches, each
// kernel in the column of its start, in O(1) per column from the lane's prefix sums.
#include "engine/timeline/lane_density.h"

#include <gtest/gtest.h>

using namespace kwb::timeline;

namespace {

// Kernels of `duration` ns every `period` ns from `from`, named alternately 0 and 1.
void addKernels(StreamLane& lane, std::int64_t from, int count, std::int64_t duration,
                std::int64_t period) {
    for (int i = 0; i < count; ++i) {
        TimelineEvent e;
        e.startNs = from + i * period;
        e.endNs = e.startNs + duration;
        e.nameId = static_cast<std::uint32_t>(lane.events.size() % 2);
        lane.events.push_back(e);
    }
}

} // namespace

TEST(LaneDensity, ColumnsCountBusyTimeAndMatchesByStart) {
    StreamLane lane;
    addKernels(lane, 0, 10, 50, 100);     // [0, 1000): half busy
    addKernels(lane, 1000, 10, 100, 100); // [1000, 2000): busy throughout
    indexStreamLane(lane);
    ASSERT_EQ(lane.busyPrefix.size(), 21u);
    EXPECT_EQ(lane.busyPrefix.back(), 10 * 50 + 10 * 100);

    const std::vector<std::uint32_t> matches = matchPrefix(lane.events, {0, 1}); // name 1 only
    EXPECT_EQ(matches.back(), 10u);
    std::vector<DensityColumn> columns;
    densityColumns(lane, &matches, 0, lane.events.size(), 0.0, 500.0, 4, columns);
    ASSERT_EQ(columns.size(), 4u);
    for (const DensityColumn& c : columns)
        EXPECT_EQ(c.count, 5u);
    EXPECT_FLOAT_EQ(columns[0].busy, 0.5f);
    EXPECT_FLOAT_EQ(columns[1].busy, 0.5f);
    EXPECT_FLOAT_EQ(columns[2].busy, 1.0f);
    EXPECT_FLOAT_EQ(columns[3].busy, 1.0f);
    EXPECT_EQ(columns[0].matches + columns[1].matches + columns[2].matches + columns[3].matches,
              10u);
    EXPECT_EQ(columns[0].matches, 2u); // indices 1 and 3 of 0..4

    // An event that starts on a column's left edge is that column's, not the one before.
    densityColumns(lane, nullptr, 0, lane.events.size(), 0.0, 100.0, 20, columns);
    for (const DensityColumn& c : columns) {
        EXPECT_EQ(c.count, 1u);
        EXPECT_EQ(c.matches, 0u) << "no filter, no matches";
    }
}

TEST(LaneDensity, OnlyTheGivenIndicesCountAndTheEdgeColumnsTakeTheRest) {
    StreamLane lane;
    addKernels(lane, 0, 100, 10, 10);
    indexStreamLane(lane);
    std::vector<DensityColumn> columns;
    // Events 20..60 over columns that start at 300 ns: earlier ones land in the first column,
    // later ones in the last.
    densityColumns(lane, nullptr, 20, 60, 300.0, 100.0, 2, columns);
    ASSERT_EQ(columns.size(), 2u);
    EXPECT_EQ(columns[0].count, 20u); // 20..39 start before 400
    EXPECT_EQ(columns[1].count, 20u); // 40..59
    EXPECT_FLOAT_EQ(columns[0].busy, 1.0f) << "clamped: more busy time than the column has";
}

TEST(LaneDensity, ALaneWithoutSumsOrNothingToDrawGivesEmptyColumns) {
    StreamLane lane;
    addKernels(lane, 0, 10, 5, 10);
    std::vector<DensityColumn> columns;
    densityColumns(lane, nullptr, 0, 10, 0.0, 10.0, 3, columns); // not indexed
    ASSERT_EQ(columns.size(), 3u);
    EXPECT_EQ(columns[0].count, 0u);
    indexStreamLane(lane);
    densityColumns(lane, nullptr, 5, 5, 0.0, 10.0, 3, columns);
    EXPECT_EQ(columns[1].count, 0u);
    densityColumns(lane, nullptr, 0, 10, 0.0, 10.0, 0, columns);
    EXPECT_TRUE(columns.empty());
}
