// Opening trace files: format detection, kwb-cupti records, Chrome trace-event JSON (kwb's own
// export round-trips; torch.profiler's shape maps onto stream and thread lanes), damage, a stop
// and progress.
#include "engine/timeline/perfetto_export.h"
#include "engine/timeline/timeline_builder.h"
#include "engine/timeline/trace_file.h"
#include "timeline_test_data.h"

#include <atomic>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace kwb::timeline;
using namespace kwb::test;
namespace fs = std::filesystem;

namespace {

class TraceFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kwb-trace-file-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& content) {
        const fs::path path = dir_ / name;
        std::ofstream(path, std::ios::binary) << content;
        return path.string();
    }

    fs::path dir_;
};

TimelineSnapshot builtFromRecords() {
    TimelineBuilder builder;
    for (const auto& line : lines(readText(timelineData("two_streams.jsonl"))))
        builder.addLine(line);
    return builder.finish();
}

// A timeline as text: lanes, their events (kind, name, times) and the kernels' launches.
std::string describe(const KernelTimeline& t) {
    std::string text = "origin " + std::to_string(t.originNs) + " end " + std::to_string(t.endNs) +
                       " device '" + t.deviceName + "' kernels " + std::to_string(t.kernelCount) +
                       "\n";
    for (const StreamLane& lane : t.streams) {
        text += lane.label + "\n";
        for (const TimelineEvent& e : lane.events) {
            text += "  " + toString(e.kind) + " " + t.displayName(e.nameId) + " " +
                    std::to_string(e.startNs) + ".." + std::to_string(e.endNs);
            if (e.kind == EventKind::Kernel) {
                const KernelLaunch& k = t.launches[e.detail];
                text += " grid " + std::to_string(k.grid[0]) + "," + std::to_string(k.grid[1]) +
                        " block " + std::to_string(k.block[0]) + " regs " +
                        std::to_string(k.registersPerThread) + " smem " +
                        std::to_string(k.staticSharedBytes) + "+" +
                        std::to_string(k.dynamicSharedBytes) + " corr " +
                        std::to_string(k.correlationId);
            } else if (e.kind == EventKind::Memcpy || e.kind == EventKind::Memset) {
                text += " bytes " + std::to_string(t.transfers[e.detail].bytes);
            } else {
                text += " detail " + std::to_string(e.detail);
            }
            text += "\n";
        }
    }
    for (const RangeLane& lane : t.ranges) {
        text += "thread " + std::to_string(lane.threadId) + "\n";
        for (const TimelineEvent& e : lane.events)
            text += "  " + t.displayName(e.nameId) + " " + std::to_string(e.startNs) + ".." +
                    std::to_string(e.endNs) + " depth " + std::to_string(e.detail) + "\n";
    }
    return text;
}

// torch.profiler's shape: host ops, a kernel and a copy with their arguments, B/E pairs, an
// instant, and events a timeline does not draw.
std::string torchTrace() {
    return R"TRACE({
      "schemaVersion": 1,
      "traceEvents": [
        {"ph":"M","name":"process_name","pid":0,"args":{"name":"GPU 0"}},
        {"ph":"X","cat":"cpu_op","name":"aten::gelu","pid":1234,"tid":140123456789,"ts":100.0,"dur":50.5},
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1234,"tid":140123456789,"ts":110.0,"dur":5.0},
        {"ph":"X","cat":"kernel","name":"void gelu_kernel<float>(float*)","pid":0,"tid":7,"ts":120.25,"dur":3.5,
         "args":{"device":0,"stream":7,"correlation":55,"registers per thread":32,"shared memory":1024,
                 "grid":[128,1,1],"block":[256,1,1]}},
        {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":130.0,"dur":1.0,
         "args":{"device":0,"stream":7,"bytes":4096}},
        {"ph":"B","name":"outer","pid":1234,"tid":5,"ts":90.0},
        {"ph":"B","name":"inner","pid":1234,"tid":5,"ts":95.0},
        {"ph":"E","pid":1234,"tid":5,"ts":97.0},
        {"ph":"E","pid":1234,"tid":5,"ts":200.0},
        {"ph":"E","pid":1234,"tid":6,"ts":200.0},
        {"ph":"i","name":"mark","pid":1234,"tid":5,"ts":150.0},
        {"ph":"s","name":"flow","id":1,"pid":1234,"tid":5,"ts":150.0},
        {"ph":"C","name":"memory","pid":1234,"ts":150.0,"args":{"bytes":10}}
      ]
    })TRACE";
}

} // namespace

TEST(TraceFormatDetection, TellsRecordsFromChromeJsonAndNamesWhatItCannotRead) {
    EXPECT_EQ(detectTraceFormat(R"({"t":"header","format":"kwb-cupti/1"})"
                                "\n{\"t\":\"end\"}\n"),
              TraceFormat::CuptiRecords);
    EXPECT_EQ(detectTraceFormat("\xEF\xBB\xBF  {\"traceEvents\":[]}"), TraceFormat::ChromeJson);
    EXPECT_EQ(detectTraceFormat("{\n  \"traceEvents\": [\n"), TraceFormat::ChromeJson);
    EXPECT_EQ(detectTraceFormat("[{\"ph\":\"X\"}]"), TraceFormat::ChromeJson);
    std::string why;
    EXPECT_EQ(detectTraceFormat("\x1f\x8b\x08\x00", &why), TraceFormat::Unknown);
    EXPECT_NE(why.find("gzip"), std::string::npos) << why;
    EXPECT_EQ(detectTraceFormat(std::string("\x0a\x05\x08\x01\x00\x02", 6), &why),
              TraceFormat::Unknown);
    EXPECT_NE(why.find("binary"), std::string::npos) << why;
    EXPECT_EQ(detectTraceFormat("  \n", &why), TraceFormat::Unknown);
    EXPECT_NE(why.find("empty"), std::string::npos) << why;
    EXPECT_EQ(detectTraceFormat("kernel,start,end\n", &why), TraceFormat::Unknown);
}

TEST_F(TraceFileTest, RecordFilesLoadAsTheBuilderReadsThem) {
    const LoadedTrace loaded = loadTraceFile(timelineData("two_streams.jsonl").string());
    ASSERT_TRUE(loaded.timeline) << loaded.error;
    EXPECT_EQ(loaded.format, TraceFormat::CuptiRecords);
    EXPECT_EQ(describe(*loaded.timeline), describe(*builtFromRecords()));
    EXPECT_TRUE(loaded.sawHeader);
    EXPECT_TRUE(loaded.sawEnd);
    EXPECT_EQ(loaded.records, 22u);
    EXPECT_EQ(loaded.malformed, loaded.timeline->dropped.malformed);
    EXPECT_GE(loaded.malformed, 2u); // the line that is not JSON and the newer writer's record
    ASSERT_EQ(loaded.writerErrors.size(), 1u);
}

TEST_F(TraceFileTest, LinesAcrossBlockEdgesCrlfAndALastLineWithoutNewline) {
    std::string content;
    const std::string kernel =
        R"({"t":"kernel","dev":0,"stream":7,"start":%,"end":%,"name":"a_fairly_long_kernel_name_to_fill_blocks"})";
    // More than one 8 MiB block, so lines are cut between blocks.
    const int count = 100000;
    for (int i = 0; i < count; ++i) {
        std::string line = kernel;
        line.replace(line.find('%'), 1, std::to_string(1000 + i * 10));
        line.replace(line.find('%'), 1, std::to_string(1005 + i * 10));
        content += line + (i % 2 ? "\r\n" : "\n");
    }
    content.pop_back(); // the last line ends without its newline
    ASSERT_GT(content.size(), 8u << 20);
    const LoadedTrace loaded = loadTraceFile(write("many.jsonl", content));
    ASSERT_TRUE(loaded.timeline) << loaded.error;
    EXPECT_EQ(loaded.timeline->kernelCount, static_cast<std::uint64_t>(count));
    EXPECT_EQ(loaded.malformed, 0u);
    EXPECT_FALSE(loaded.sawHeader) << "no header line: a file cut before it was written";
}

TEST_F(TraceFileTest, KwbsOwnChromeExportRoundTrips) {
    const TimelineSnapshot original = builtFromRecords();
    const std::string path = (dir_ / "trace.json").string();
    ASSERT_TRUE(writePerfettoTraceFile(path, *original));
    const LoadedTrace loaded = loadTraceFile(path);
    ASSERT_TRUE(loaded.timeline) << loaded.error;
    EXPECT_EQ(loaded.format, TraceFormat::ChromeJson);
    EXPECT_EQ(describe(*loaded.timeline), describe(*original));
    EXPECT_EQ(loaded.timeline->kernelStatistics.size(), original->kernelStatistics.size());
}

TEST_F(TraceFileTest, TorchProfilerTracesPutKernelsOnStreamsAndHostOpsOnThreads) {
    const std::string trace = torchTrace();
    const LoadedTrace loaded = loadTraceFile(write("torch.json", trace));
    ASSERT_TRUE(loaded.timeline) << loaded.error;
    const KernelTimeline& t = *loaded.timeline;
    EXPECT_EQ(t.kernelCount, 1u);
    ASSERT_EQ(t.streams.size(), 1u);
    EXPECT_EQ(t.streams[0].streamId, 7u);
    ASSERT_EQ(t.streams[0].events.size(), 2u);
    const TimelineEvent& kernel = t.streams[0].events[0];
    EXPECT_EQ(t.displayName(kernel.nameId), "void gelu_kernel<float>(float*)");
    EXPECT_EQ(kernel.durationNs(), 3500);
    EXPECT_EQ(t.launches[kernel.detail].grid[0], 128u);
    EXPECT_EQ(t.launches[kernel.detail].registersPerThread, 32u);
    EXPECT_EQ(t.launches[kernel.detail].correlationId, 55u);
    EXPECT_EQ(t.transfers[t.streams[0].events[1].detail].bytes, 4096u);
    // Host work: the two X events on the wide thread id, the B/E pair nested, and the instant.
    ASSERT_EQ(t.ranges.size(), 2u);
    std::size_t hostEvents = 0;
    std::uint32_t deepest = 0;
    for (const RangeLane& lane : t.ranges) {
        hostEvents += lane.events.size();
        deepest = std::max(deepest, lane.maxDepth);
    }
    EXPECT_EQ(hostEvents, 5u);
    EXPECT_EQ(deepest, 1u) << "inner inside outer, cudaLaunchKernel inside aten::gelu";
    EXPECT_EQ(loaded.skipped, 4u) << "metadata, the unmatched end, the flow and the counter";
}

TEST_F(TraceFileTest, DamagedAndForeignFilesSayWhy) {
    const LoadedTrace missing = loadTraceFile((dir_ / "absent.json").string());
    EXPECT_FALSE(missing.timeline);
    EXPECT_NE(missing.error.find("does not exist"), std::string::npos) << missing.error;

    const LoadedTrace folder = loadTraceFile(dir_.string());
    EXPECT_NE(folder.error.find("not a file"), std::string::npos) << folder.error;

    const LoadedTrace truncated =
        loadTraceFile(write("cut.json", R"({"traceEvents":[{"ph":"X","name":"k","ts":1,)"));
    EXPECT_FALSE(truncated.timeline);
    EXPECT_EQ(truncated.format, TraceFormat::ChromeJson);
    EXPECT_NE(truncated.error.find("byte"), std::string::npos) << truncated.error;

    const LoadedTrace noEvents = loadTraceFile(write("other.json", R"({"name":"not a trace"})"));
    EXPECT_NE(noEvents.error.find("traceEvents"), std::string::npos) << noEvents.error;

    const LoadedTrace gzip = loadTraceFile(write("trace.json.gz", "\x1f\x8b\x08\x00rest"));
    EXPECT_NE(gzip.error.find("gunzip"), std::string::npos) << gzip.error;

    const LoadedTrace empty = loadTraceFile(write("empty.jsonl", ""));
    EXPECT_NE(empty.error.find("empty"), std::string::npos) << empty.error;
}

TEST_F(TraceFileTest, AStopEndsTheLoadAndProgressReachesTheFileSize) {
    std::string content;
    for (int i = 0; i < 200000; ++i)
        content += R"({"t":"kernel","dev":0,"stream":7,"start":)" + std::to_string(i * 10) +
                   R"(,"end":)" + std::to_string(i * 10 + 5) + R"(,"name":"k"})" + "\n";
    const std::string records = write("records.jsonl", content);
    std::uint64_t lastDone = 0, total = 0;
    int calls = 0;
    const LoadedTrace whole =
        loadTraceFile(records, {}, [&](std::uint64_t done, std::uint64_t all) {
            EXPECT_GE(done, lastDone);
            lastDone = done;
            total = all;
            ++calls;
        });
    ASSERT_TRUE(whole.timeline) << whole.error;
    EXPECT_EQ(total, content.size());
    EXPECT_EQ(lastDone, content.size());
    EXPECT_GE(calls, 2);

    std::stop_source stop;
    const LoadedTrace stopped = loadTraceFile(
        records, stop.get_token(), [&](std::uint64_t, std::uint64_t) { stop.request_stop(); });
    EXPECT_TRUE(stopped.cancelled);
    EXPECT_FALSE(stopped.timeline);
    EXPECT_TRUE(stopped.error.empty()) << stopped.error;

    // The same for a Chrome trace, read in 1 MiB pieces.
    const std::string path = (dir_ / "big.json").string();
    std::ofstream out(path);
    out << R"({"traceEvents":[)";
    for (int i = 0; i < 40000; ++i)
        out << (i ? "," : "") << R"({"ph":"X","cat":"kernel","name":"k","pid":1,"tid":7,"ts":)"
            << i * 10 << R"(,"dur":5})";
    out << "]}";
    out.close();
    std::stop_source stopJson;
    const LoadedTrace stoppedJson = loadTraceFile(
        path, stopJson.get_token(), [&](std::uint64_t, std::uint64_t) { stopJson.request_stop(); });
    EXPECT_TRUE(stoppedJson.cancelled);
    EXPECT_FALSE(stoppedJson.timeline);
    const LoadedTrace json = loadTraceFile(path);
    ASSERT_TRUE(json.timeline) << json.error;
    EXPECT_EQ(json.timeline->kernelCount, 40000u);
}

TEST_F(TraceFileTest, ChromeTracesReadTheSameWithSimdjsonAndStreamed) {
    const std::string torch = write("torch.json", torchTrace());
    const std::string exported = (dir_ / "export.json").string();
    ASSERT_TRUE(writePerfettoTraceFile(exported, *builtFromRecords()));
    const std::string array =
        write("array.json", R"([{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.5,)"
                            R"("dur":2,"args":{"grid":[4,1,1],"block":[64,1,1]}},"not an event",)"
                            R"({"ph":"X","name":"host","pid":3,"tid":"main","ts":0,"dur":9}])");
    for (const std::string& path : {torch, exported, array}) {
        const LoadedTrace fast = loadTraceFile(path, {}, {}, FlatJsonParser::Fastest);
        const LoadedTrace streamed = loadTraceFile(path, {}, {}, FlatJsonParser::Nlohmann);
        ASSERT_TRUE(fast.timeline) << path << ": " << fast.error;
        ASSERT_TRUE(streamed.timeline) << path << ": " << streamed.error;
        EXPECT_EQ(describe(*fast.timeline), describe(*streamed.timeline)) << path;
        EXPECT_EQ(fast.records, streamed.records) << path;
        EXPECT_EQ(fast.skipped, streamed.skipped) << path;
    }
    for (const std::string& broken :
         {std::string(R"({"traceEvents":[{"ph":"X","name":"k","ts":1,)"),
          std::string(R"({"traceEvents":[]} trailing)"), std::string(R"({"traceEvents":7})"),
          std::string(R"({"otherData":{}})")}) {
        const std::string path = write("broken.json", broken);
        EXPECT_FALSE(loadTraceFile(path, {}, {}, FlatJsonParser::Fastest).timeline) << broken;
        EXPECT_FALSE(loadTraceFile(path, {}, {}, FlatJsonParser::Nlohmann).timeline) << broken;
    }
}
