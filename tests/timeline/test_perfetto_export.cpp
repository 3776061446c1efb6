#include "engine/timeline/perfetto_export.h"
#include "engine/timeline/timeline_builder.h"
#include "timeline_test_data.h"

#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace kwb::timeline;
using namespace kwb::test;
using nlohmann::json;

namespace {

json exported() {
    TimelineBuilder builder;
    for (const auto& line : lines(readText(timelineData("two_streams.jsonl"))))
        builder.addLine(line);
    std::ostringstream out;
    writePerfettoTrace(out, *builder.finish());
    return json::parse(out.str());
}

std::vector<json> eventsWithPhase(const json& trace, const std::string& phase) {
    std::vector<json> out;
    for (const auto& e : trace.at("traceEvents"))
        if (e.at("ph") == phase)
            out.push_back(e);
    return out;
}

const json* find(const std::vector<json>& events, const std::string& name, double ts) {
    for (const auto& e : events)
        if (e.at("name") == name && e.at("ts").get<double>() == ts)
            return &e;
    return nullptr;
}

} // namespace

TEST(PerfettoExport, CompleteEventsInMicrosecondsOnePerRecord) {
    const json trace = exported();
    const auto complete = eventsWithPhase(trace, "X");
    // Stream 7: 3 kernels + memcpy; stream 13: kernel + memset; one sync; three NVTX ranges.
    EXPECT_EQ(complete.size(), 10u);
    const json* gelu = find(complete, "gelu_kernel(float const*, float*, int)", 1.5);
    ASSERT_NE(gelu, nullptr);
    EXPECT_DOUBLE_EQ(gelu->at("dur").get<double>(), 2.0);
    EXPECT_EQ(gelu->at("cat"), "kernel");
    EXPECT_EQ(gelu->at("pid"), kDevicePidBase + 0);
    EXPECT_EQ(gelu->at("tid"), 7);
    EXPECT_EQ(gelu->at("args").at("grid"), json({128, 1, 1}));
    EXPECT_EQ(gelu->at("args").at("block"), json({256, 1, 1}));
    EXPECT_EQ(gelu->at("args").at("registers_per_thread"), 32);
    EXPECT_EQ(gelu->at("args").at("dynamic_shared_bytes"), 1024);
    EXPECT_EQ(gelu->at("args").at("mangled_name"), "_Z11gelu_kernelPKfPfi");

    const json* gemm = find(complete, "ampere_sgemm_128x64_nn", 2.5);
    ASSERT_NE(gemm, nullptr);
    EXPECT_EQ(gemm->at("tid"), 13);
    EXPECT_EQ(gemm->at("args").at("static_shared_bytes"), 16384);

    const json* copy = find(complete, "Memcpy HtoD", 7.7);
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(copy->at("args").at("bytes"), 4096);
    EXPECT_DOUBLE_EQ(copy->at("dur").get<double>(), 0.4);

    const json* sync = find(complete, "cudaStreamSynchronize", 9.5);
    ASSERT_NE(sync, nullptr);
    EXPECT_EQ(sync->at("tid"), kSynchronizationTid);
}

TEST(PerfettoExport, NvtxRangesOnTheirOwnTrackAndNamesAsMetadata) {
    const json trace = exported();
    const auto complete = eventsWithPhase(trace, "X");
    std::set<std::string> rangeNames;
    for (const auto& e : complete)
        if (e.at("pid") == kNvtxPid) {
            EXPECT_EQ(e.at("tid"), 42);
            EXPECT_EQ(e.at("cat"), "range");
            rangeNames.insert(e.at("name"));
        }
    EXPECT_EQ(rangeNames, (std::set<std::string>{"candidate", "iteration 0", "iteration 1"}));
    const json* outer = find(complete, "candidate", 0.5);
    ASSERT_NE(outer, nullptr);
    EXPECT_DOUBLE_EQ(outer->at("dur").get<double>(), 11.0);

    std::map<std::pair<int, std::int64_t>, std::string> threadNames;
    std::map<int, std::string> processNames;
    for (const auto& m : eventsWithPhase(trace, "M")) {
        if (m.at("name") == "thread_name")
            threadNames[{m.at("pid").get<int>(), m.at("tid").get<std::int64_t>()}] =
                m.at("args").at("name");
        if (m.at("name") == "process_name")
            processNames[m.at("pid").get<int>()] = m.at("args").at("name");
    }
    EXPECT_EQ(processNames.at(kDevicePidBase), "GPU 0 · NVIDIA H200");
    EXPECT_EQ(processNames.at(kNvtxPid), "NVTX ranges");
    EXPECT_EQ(threadNames.at({kDevicePidBase, 7}), "stream 7");
    EXPECT_EQ(threadNames.at({kDevicePidBase, 13}), "stream 13");
    EXPECT_EQ(threadNames.at({kDevicePidBase, kSynchronizationTid}), "synchronization");
    EXPECT_EQ(threadNames.at({kNvtxPid, 42}), "NVTX · thread 42");
}

TEST(PerfettoExport, DroppedCountsInTheTraceMetadata) {
    const json trace = exported();
    EXPECT_EQ(trace.at("displayTimeUnit"), "ns");
    const json& meta = trace.at("otherData");
    EXPECT_EQ(meta.at("dropped_cupti"), 5);
    EXPECT_EQ(meta.at("dropped_malformed"), 5);
    EXPECT_EQ(meta.at("dropped_buffer_overflow"), 4);
    EXPECT_EQ(meta.at("dropped_total"), 14);
    EXPECT_EQ(meta.at("kernel_count"), 4);
    EXPECT_EQ(meta.at("origin_ns"), kOrigin);
}

TEST(PerfettoExport, EmptyTimelineIsAValidTrace) {
    std::ostringstream out;
    writePerfettoTrace(out, KernelTimeline{});
    const json trace = json::parse(out.str());
    EXPECT_TRUE(trace.at("traceEvents").empty());
}

TEST(PerfettoExport, WritesAFileAndReportsAnUnwritablePath) {
    const auto path = std::filesystem::temp_directory_path() / "kwb_perfetto_export_test.json";
    TimelineBuilder builder;
    for (const auto& line : lines(readText(timelineData("two_streams.jsonl"))))
        builder.addLine(line);
    ASSERT_TRUE(writePerfettoTraceFile(path.string(), *builder.finish()));
    EXPECT_EQ(json::parse(readText(path)).at("otherData").at("kernel_count"), 4);
    std::filesystem::remove(path);
    std::string error;
    EXPECT_FALSE(writePerfettoTraceFile("/nonexistent-dir/trace.json", KernelTimeline{}, &error));
    EXPECT_NE(error.find("/nonexistent-dir/trace.json"), std::string::npos);
}
