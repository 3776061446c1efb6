#include "engine/timeline/kernel_timeline.h"
#include "engine/timeline/record_reader.h"
#include "engine/timeline/timeline_builder.h"
#include "timeline_test_data.h"

#include <gtest/gtest.h>

using namespace kwb::timeline;
using namespace kwb::test;

namespace {

TimelineSnapshot buildFrom(const std::string& file) {
    TimelineBuilder builder;
    for (const auto& line : lines(readText(timelineData(file))))
        builder.addLine(line);
    return builder.finish();
}

const StreamLane* laneOf(const KernelTimeline& t, std::uint32_t device, std::uint32_t stream) {
    for (const auto& lane : t.streams)
        if (lane.deviceId == device && lane.streamId == stream)
            return &lane;
    return nullptr;
}

std::string nameOf(const KernelTimeline& t, const TimelineEvent& e) {
    return t.displayName(e.nameId);
}

} // namespace

TEST(TimelineBuilder, LanesPerDeviceAndStreamInStartOrderWithOriginAtTheEarliestRecord) {
    const TimelineSnapshot t = buildFrom("two_streams.jsonl");
    EXPECT_EQ(t->originNs, kOrigin);
    EXPECT_EQ(t->endNs, kT0 + 11000 - kOrigin); // the outer NVTX range ends last
    ASSERT_EQ(t->streams.size(), 3u);
    EXPECT_EQ(t->streams[0].streamId, 7u);
    EXPECT_EQ(t->streams[1].streamId, 13u);
    EXPECT_EQ(t->streams[2].streamId, kSynchronizationLane);
    EXPECT_EQ(t->streams[0].label, "GPU 0 · stream 7");
    EXPECT_EQ(t->streams[2].label, "GPU 0 · synchronization");
    EXPECT_EQ(t->deviceName, "NVIDIA H200");
    EXPECT_EQ(t->kernelCount, 4u);

    // Stream 7 got its records out of order: the last line of the file starts first.
    const StreamLane& s7 = *laneOf(*t, 0, 7);
    ASSERT_EQ(s7.events.size(), 4u);
    EXPECT_EQ(nameOf(*t, s7.events[0]), "warmup_touch()");
    EXPECT_EQ(s7.events[0].startNs, 0);
    EXPECT_EQ(s7.events[0].endNs, 300);
    EXPECT_EQ(nameOf(*t, s7.events[1]), "gelu_kernel(float const*, float*, int)");
    EXPECT_EQ(s7.events[1].startNs, 1500);
    EXPECT_EQ(s7.events[2].kind, EventKind::Memcpy);
    EXPECT_EQ(nameOf(*t, s7.events[2]), "Memcpy HtoD");
    EXPECT_EQ(s7.events[3].startNs, 8500);
    EXPECT_EQ(s7.maxEndPrefix, (std::vector<std::int64_t>{300, 3500, 8100, 9500}));

    const StreamLane& s13 = *laneOf(*t, 0, 13);
    ASSERT_EQ(s13.events.size(), 2u);
    EXPECT_EQ(s13.events[0].startNs, 2500); // overlaps stream 7's gelu kernel [1500, 3500]
    EXPECT_EQ(s13.events[1].kind, EventKind::Memset);
    EXPECT_EQ(s13.maxEndPrefix, (std::vector<std::int64_t>{6500, 10200}));
}

TEST(TimelineBuilder, KernelDetailsAndTransfersLandInTheSideTables) {
    const TimelineSnapshot t = buildFrom("two_streams.jsonl");
    const StreamLane& s13 = *laneOf(*t, 0, 13);
    const KernelLaunch& gemm = t->launches.at(s13.events[0].detail);
    EXPECT_EQ(gemm.grid[0], 4u);
    EXPECT_EQ(gemm.grid[1], 8u);
    EXPECT_EQ(gemm.block[0], 128u);
    EXPECT_EQ(gemm.registersPerThread, 128u);
    EXPECT_EQ(gemm.staticSharedBytes, 16384u);
    EXPECT_EQ(gemm.localBytesPerThread, 16u);
    EXPECT_EQ(gemm.correlationId, 12u);
    EXPECT_EQ(t->names[s13.events[0].nameId], "ampere_sgemm_128x64_nn");
    EXPECT_EQ(t->demangledNames[s13.events[0].nameId], "ampere_sgemm_128x64_nn");

    const Transfer& memset = t->transfers.at(s13.events[1].detail);
    EXPECT_EQ(memset.bytes, 1024u);
    EXPECT_EQ(memset.copyKind, "memset");
    const StreamLane& s7 = *laneOf(*t, 0, 7);
    EXPECT_EQ(t->transfers.at(s7.events[2].detail).bytes, 4096u);
    EXPECT_EQ(t->transfers.at(s7.events[2].detail).copyKind, "HtoD");

    const StreamLane& sync = *laneOf(*t, 0, kSynchronizationLane);
    ASSERT_EQ(sync.events.size(), 1u);
    EXPECT_EQ(sync.events[0].kind, EventKind::Sync);
    EXPECT_EQ(sync.events[0].detail, 3u); // CUPTI's STREAM_SYNCHRONIZE
    EXPECT_EQ(nameOf(*t, sync.events[0]), "cudaStreamSynchronize");
}

TEST(TimelineBuilder, NvtxRangesNestPerThread) {
    const TimelineSnapshot t = buildFrom("two_streams.jsonl");
    ASSERT_EQ(t->ranges.size(), 1u);
    const RangeLane& lane = t->ranges[0];
    EXPECT_EQ(lane.threadId, 42u);
    ASSERT_EQ(lane.events.size(), 3u);
    EXPECT_EQ(nameOf(*t, lane.events[0]), "candidate");
    EXPECT_EQ(lane.events[0].detail, 0u);
    EXPECT_EQ(lane.events[0].startNs, 500);
    EXPECT_EQ(lane.events[0].endNs, 11500);
    EXPECT_EQ(nameOf(*t, lane.events[1]), "iteration 0");
    EXPECT_EQ(lane.events[1].detail, 1u);
    EXPECT_EQ(lane.events[1].endNs, 7500);
    EXPECT_EQ(nameOf(*t, lane.events[2]), "iteration 1");
    EXPECT_EQ(lane.events[2].detail, 1u); // iteration 0 ended before it began
    EXPECT_EQ(lane.maxDepth, 1u);
    EXPECT_EQ(lane.maxEndPrefix, (std::vector<std::int64_t>{11500, 11500, 11500}));
}

TEST(TimelineBuilder, StatisticsPerKernelNameSortedByTotalTime) {
    const TimelineSnapshot t = buildFrom("two_streams.jsonl");
    ASSERT_EQ(t->kernelStatistics.size(), 3u);
    const NameStatistics& gemm = t->kernelStatistics[0];
    EXPECT_EQ(t->displayName(gemm.nameId), "ampere_sgemm_128x64_nn");
    EXPECT_EQ(gemm.count, 1u);
    EXPECT_EQ(gemm.totalNs, 4000);
    const NameStatistics& gelu = t->kernelStatistics[1];
    EXPECT_EQ(t->displayName(gelu.nameId), "gelu_kernel(float const*, float*, int)");
    EXPECT_EQ(gelu.count, 2u);
    EXPECT_EQ(gelu.totalNs, 3000);
    EXPECT_EQ(gelu.minNs, 1000);
    EXPECT_EQ(gelu.maxNs, 2000);
    EXPECT_DOUBLE_EQ(gelu.meanNs, 1500.0);
    EXPECT_EQ(t->kernelStatistics[2].totalNs, 300);
}

TEST(TimelineBuilder, DroppedCountsIncludeMalformedLinesUnknownKindsAndWriteFailures) {
    TimelineBuilder builder;
    for (const auto& line : lines(readText(timelineData("two_streams.jsonl"))))
        builder.addLine(line);
    const TimelineSnapshot t = builder.finish();
    EXPECT_EQ(t->dropped.cuptiDropped, 5u);
    // A truncated line, a non-JSON line, a record of an unknown type, two unknown CUPTI kinds.
    EXPECT_EQ(t->dropped.malformed, 5u);
    // Deltas said 3, the end record's total says 4: the total wins.
    EXPECT_EQ(t->dropped.bufferOverflow, 4u);
    EXPECT_EQ(t->dropped.total(), 14u);
    EXPECT_TRUE(builder.sawHeader());
    EXPECT_TRUE(builder.sawEnd());
    ASSERT_EQ(builder.errors().size(), 1u);
    EXPECT_NE(builder.errors()[0].find("CUPTI_ERROR_NOT_SUPPORTED"), std::string::npos);
}

TEST(TimelineBuilder, OpenRangesReachTheLatestTimestampAndSnapshotsStayImmutable) {
    const auto all = lines(readText(timelineData("two_streams.jsonl")));
    TimelineBuilder builder;
    for (std::size_t i = 0; i < 7; ++i) // up to the gemm kernel: two ranges open
        builder.addLine(all[i]);
    const TimelineSnapshot early = builder.finish();
    ASSERT_EQ(early->ranges.size(), 1u);
    ASSERT_EQ(early->ranges[0].events.size(), 2u);
    EXPECT_EQ(early->originNs, kT0);
    EXPECT_EQ(early->ranges[0].events[0].endNs, 6000); // the gemm's end, the latest so far
    EXPECT_EQ(early->kernelCount, 2u);
    for (std::size_t i = 7; i < all.size(); ++i)
        builder.addLine(all[i]);
    EXPECT_EQ(early->kernelCount, 2u);
    EXPECT_EQ(builder.finish()->kernelCount, 4u);
}

TEST(TimelineBuilder, EmptyInputGivesAnEmptyTimeline) {
    TimelineBuilder builder;
    builder.addLine("");
    const TimelineSnapshot t = builder.finish();
    EXPECT_TRUE(t->streams.empty());
    EXPECT_TRUE(t->ranges.empty());
    EXPECT_EQ(t->dropped.total(), 0u);
}

TEST(VisibleRange, FindsTheEventsThatIntersectAWindowOnTheRecordedLanes) {
    const TimelineSnapshot t = buildFrom("two_streams.jsonl");
    const StreamLane& s7 = *laneOf(*t, 0, 7);
    EXPECT_EQ(visibleRange(s7.events, s7.maxEndPrefix, 4000, 8000),
              (std::pair<std::size_t, std::size_t>{2, 3}));
    EXPECT_EQ(visibleRange(s7.events, s7.maxEndPrefix, 0, 100000),
              (std::pair<std::size_t, std::size_t>{0, 4}));
    EXPECT_EQ(visibleRange(s7.events, s7.maxEndPrefix, 3600, 7600),
              (std::pair<std::size_t, std::size_t>{2, 2}));
    // The outer range spans everything: a late window still reaches back to it.
    const RangeLane& r = t->ranges[0];
    EXPECT_EQ(visibleRange(r.events, r.maxEndPrefix, 8000, 9000),
              (std::pair<std::size_t, std::size_t>{0, 3}));
}

TEST(RecordReader, RejectsWrongTypesAndKeepsGoodLines) {
    EXPECT_FALSE(
        parseRecordLine(R"({"t":"kernel","dev":0,"stream":1,"start":"soon","end":2,"name":"k"})"));
    EXPECT_FALSE(
        parseRecordLine(R"({"t":"kernel","dev":0,"stream":1,"start":5,"end":2,"name":"k"})"));
    EXPECT_FALSE(parseRecordLine(
        R"({"t":"kernel","dev":0,"stream":1,"start":1,"end":2,"grid":[1,2],"name":"k"})"));
    EXPECT_FALSE(parseRecordLine(R"({"t":"marker","id":1,"flag":"sideways","ts":3})"));
    EXPECT_FALSE(parseRecordLine(R"([1,2,3])"));
    EXPECT_FALSE(parseRecordLine(R"({"no_type":1})"));
    auto sync = parseRecordLine(
        R"({"t":"sync","ctx":1,"stream":-1,"start":1,"end":2,"type":"context_synchronize"})");
    ASSERT_TRUE(sync);
    EXPECT_EQ(sync->type, RecordType::Sync);
    EXPECT_EQ(sync->stream, -1);
    auto kernel = parseRecordLine(
        R"({"t":"kernel","dev":1,"ctx":3,"stream":7,"start":10,"end":20,"grid":[2,3,4],"block":[32,1,1],"regs":40,"name":"k"})"
        "\r\n");
    ASSERT_TRUE(kernel);
    EXPECT_EQ(kernel->device, 1u);
    EXPECT_EQ(kernel->launch.grid[2], 4u);
    EXPECT_EQ(kernel->launch.registersPerThread, 40u);
}
