// The injection library without a GPU: its record format read back by the engine's reader
// (fake CUPTI records), its exported entry points, and a process that calls its entry point
// where CUPTI cannot record, which must carry on unprofiled and say why.
#include "engine/cuda/gpu_inventory.h"
#include "engine/cupti/activity_lines.h"
#include "engine/cupti/sealed_line.h"
#include "engine/timeline/record_reader.h"
#include "engine/timeline/timeline_builder.h"
#include "timeline_test_data.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kwb::timeline;
using namespace kwb::test;
namespace fs = std::filesystem;

TEST(CuptiRecordFormat, KernelRecordsReadBackWithEveryField) {
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.deviceId = 1;
    k.contextId = 5;
    k.streamId = 7;
    k.start = 1000;
    k.end = 2500;
    k.gridX = 64;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 40;
    k.staticSharedMemory = 4096;
    k.dynamicSharedMemory = 512;
    k.localMemoryPerThread = 24;
    k.correlationId = 77;
    k.name = "_Z6kernelPf\"quoted\"";
    const std::string line = kwb::cupti::formatActivity(reinterpret_cast<CUpti_Activity*>(&k));
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1);
    auto r = parseRecordLine(line);
    ASSERT_TRUE(r) << line;
    EXPECT_EQ(r->type, RecordType::Kernel);
    EXPECT_EQ(r->device, 1u);
    EXPECT_EQ(r->context, 5u);
    EXPECT_EQ(r->stream, 7);
    EXPECT_EQ(r->start, 1000);
    EXPECT_EQ(r->end, 2500);
    EXPECT_EQ(r->launch.grid[0], 64u);
    EXPECT_EQ(r->launch.grid[1], 2u);
    EXPECT_EQ(r->launch.block[0], 256u);
    EXPECT_EQ(r->launch.registersPerThread, 40u);
    EXPECT_EQ(r->launch.staticSharedBytes, 4096u);
    EXPECT_EQ(r->launch.dynamicSharedBytes, 512u);
    EXPECT_EQ(r->launch.localBytesPerThread, 24u);
    EXPECT_EQ(r->launch.correlationId, 77u);
    EXPECT_EQ(r->name, "_Z6kernelPf\"quoted\"");
}

TEST(CuptiRecordFormat, TransfersSyncAndMarkersReadBack) {
    CUpti_ActivityMemcpy6 m;
    std::memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.bytes = 1 << 20;
    m.start = 10;
    m.end = 20;
    m.streamId = 3;
    auto copy = parseRecordLine(kwb::cupti::formatActivity(reinterpret_cast<CUpti_Activity*>(&m)));
    ASSERT_TRUE(copy);
    EXPECT_EQ(copy->type, RecordType::Memcpy);
    EXPECT_EQ(copy->bytes, 1u << 20);
    EXPECT_EQ(copy->detail, "DtoH");

    CUpti_ActivityMemset4 s;
    std::memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.bytes = 64;
    s.start = 30;
    s.end = 31;
    auto memset =
        parseRecordLine(kwb::cupti::formatActivity(reinterpret_cast<CUpti_Activity*>(&s)));
    ASSERT_TRUE(memset);
    EXPECT_EQ(memset->type, RecordType::Memset);
    EXPECT_EQ(memset->bytes, 64u);

    CUpti_ActivitySynchronization2 y;
    std::memset(&y, 0, sizeof y);
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    y.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    y.contextId = 1;
    y.start = 40;
    y.end = 90;
    auto sync = parseRecordLine(kwb::cupti::formatActivity(reinterpret_cast<CUpti_Activity*>(&y)));
    ASSERT_TRUE(sync);
    EXPECT_EQ(sync->stream, -1);
    EXPECT_EQ(sync->detail, "context_synchronize");

    CUpti_ActivityMarker2 start;
    std::memset(&start, 0, sizeof start);
    start.kind = CUPTI_ACTIVITY_KIND_MARKER;
    start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    start.id = 9;
    start.timestamp = 15;
    start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    start.objectId.pt.threadId = 1234;
    start.name = "iteration 0";
    CUpti_ActivityMarker2 end = start;
    end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    end.timestamp = 25;
    end.name = nullptr;
    TimelineBuilder builder;
    builder.addLine(kwb::cupti::formatActivity(reinterpret_cast<CUpti_Activity*>(&start)));
    builder.addLine(kwb::cupti::formatActivity(reinterpret_cast<CUpti_Activity*>(&end)));
    const TimelineSnapshot t = builder.finish();
    ASSERT_EQ(t->ranges.size(), 1u);
    EXPECT_EQ(t->ranges[0].threadId, 1234u);
    ASSERT_EQ(t->ranges[0].events.size(), 1u);
    EXPECT_EQ(t->displayName(t->ranges[0].events[0].nameId), "iteration 0");
    EXPECT_EQ(t->ranges[0].events[0].durationNs(), 10);
    EXPECT_EQ(t->dropped.total(), 0u);
}

TEST(CuptiRecordFormat, BookkeepingLinesReadBackAndUnknownKindsAreEmpty) {
    TimelineBuilder builder;
    builder.addLine(kwb::cupti::formatHeader(99, 130001));
    builder.addLine(kwb::cupti::formatDropped(3, 2, 0));
    builder.addLine(kwb::cupti::formatError("bad\nthings \xff happen"));
    builder.addLine(kwb::cupti::formatEnd(10, 1));
    EXPECT_TRUE(builder.sawHeader());
    EXPECT_TRUE(builder.sawEnd());
    ASSERT_EQ(builder.errors().size(), 1u);
    EXPECT_EQ(builder.errors()[0], "bad\nthings \xEF\xBF\xBD happen");
    const TimelineSnapshot t = builder.finish();
    EXPECT_EQ(t->dropped.cuptiDropped, 3u);
    EXPECT_EQ(t->dropped.malformed, 2u);
    EXPECT_EQ(t->dropped.bufferOverflow, 1u);

    CUpti_Activity other{};
    other.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    EXPECT_TRUE(kwb::cupti::formatActivity(&other).empty());
}

// The key 00 01 .. 1f and the record below; the MACs were computed with Python's hmac module,
// the judge's side of the contract (tests/harness/test_kernel_records.py holds the same vector).
constexpr const char* kVectorRecord = R"({"t":"kernel","name":"k"})";

std::string vectorKey() {
    std::string key;
    for (int i = 0; i < 32; ++i)
        key += static_cast<char>(i);
    return key;
}

TEST(CuptiSealedLines, MatchTheJudgesKnownAnswers) {
    EXPECT_EQ(kwb::cupti::sealLine(vectorKey(), 0, std::string(kVectorRecord) + "\n"),
              std::string("0 d76337cb30c83819e74a8124f64c40be4f60cc5fb913ab61bb9c83d17248d393 ") +
                  kVectorRecord + "\n");
    EXPECT_EQ(kwb::cupti::sealLine(vectorKey(), 7, kVectorRecord),
              std::string("7 1b4e10f744d1b1a902222b79cdb74142d26fa191dd42d0103be04957293c4968 ") +
                  kVectorRecord + "\n");
    // Another key, another seal; no key, no line.
    EXPECT_NE(kwb::cupti::sealLine(std::string(32, 'x'), 0, kVectorRecord),
              kwb::cupti::sealLine(vectorKey(), 0, kVectorRecord));
    EXPECT_TRUE(kwb::cupti::sealLine("", 0, kVectorRecord).empty());
    EXPECT_EQ(kwb::cupti::formatFlushed(12345, 12000, 7),
              "{\"t\":\"flushed\",\"at\":12345,\"cupti\":12000,\"launches\":7}\n");
}

TEST(CuptiInjectionLibrary, LoadsAndExportsItsEntryPoints) {
    void* handle = dlopen(KWB_CUPTI_INJECT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    for (const char* symbol :
         {"InitializeInjection", "InitializeInjectionNvtx2", "kwbCuptiFlush", "kwbCuptiFinish"})
        EXPECT_NE(dlsym(handle, symbol), nullptr) << symbol;
    // Everything else stays private, so it cannot clash with the host's symbols.
    EXPECT_EQ(dlsym(handle, "_ZN3kwb5cupti14formatActivityB5cxx11EPK14CUpti_Activity"), nullptr);
    dlclose(handle);
}

TEST(CuptiInjectionLibrary, AProcessWhereCuptiCannotRecordCarriesOnAndSaysWhy) {
    const fs::path out =
        fs::temp_directory_path() / ("kwb_inject_" + std::to_string(::getpid()) + ".jsonl");
    fs::remove(out);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::setenv("KWB_TIMELINE_OUT", out.c_str(), 1);
        void* handle = dlopen(KWB_CUPTI_INJECT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            ::_exit(10);
        auto init = reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection"));
        auto finish = reinterpret_cast<int (*)()>(dlsym(handle, "kwbCuptiFinish"));
        if (!init || !finish || init() != 1)
            ::_exit(11);
        finish();
        ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "the host process died";
    EXPECT_EQ(WEXITSTATUS(status), 0);
    TimelineBuilder builder;
    for (const auto& line : lines(readText(out)))
        builder.addLine(line);
    fs::remove(out);
    EXPECT_TRUE(builder.sawHeader());
    EXPECT_EQ(builder.finish()->dropped.malformed, 0u);
    if (!kwb::detectGpus().hasGpu()) {
        // No driver: CUPTI cannot enable kernel records, and the file says so.
        ASSERT_FALSE(builder.errors().empty());
        EXPECT_NE(builder.errors().back().find("not recording"), std::string::npos);
    }
}

// A candidate's process in the judge's "sealed" mode: the library reads the key from its pipe and
// closes it, forgets the variables that named the descriptors (nothing the candidate starts sees
// them), and every line it writes to the judge's pipe is sealed and numbered from 0.
TEST(CuptiInjectionLibrary, SealedModeTakesTheKeyAndSealsEveryLine) {
    int records[2];
    int seal[2];
    ASSERT_EQ(::pipe(records), 0);
    ASSERT_EQ(::pipe(seal), 0);
    const std::string key = vectorKey();
    ASSERT_EQ(::write(seal[1], key.data(), key.size()), static_cast<ssize_t>(key.size()));
    ::close(seal[1]);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(records[0]);
        ::setenv("KWB_KERNEL_RECORDS", "sealed", 1);
        ::setenv("KWB_RECORDS_FD", std::to_string(records[1]).c_str(), 1);
        ::setenv("KWB_RECORDS_SEAL_FD", std::to_string(seal[0]).c_str(), 1);
        void* handle = dlopen(KWB_CUPTI_INJECT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            ::_exit(10);
        auto init = reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection"));
        auto finish = reinterpret_cast<int (*)()>(dlsym(handle, "kwbCuptiFinish"));
        if (!init || !finish || init() != 1)
            ::_exit(11);
        if (std::getenv("KWB_RECORDS_FD") || std::getenv("KWB_RECORDS_SEAL_FD") ||
            std::getenv("KWB_KERNEL_RECORDS"))
            ::_exit(12);
        char byte = 0;
        if (::read(seal[0], &byte, 1) != -1 || errno != EBADF)
            ::_exit(13); // the key's descriptor is closed
        finish();
        ::_exit(0);
    }
    ::close(records[1]);
    ::close(seal[0]);
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(records[0], buffer, sizeof buffer)) > 0;)
        text.append(buffer, static_cast<std::size_t>(n));
    ::close(records[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "the host process died";
    EXPECT_EQ(WEXITSTATUS(status), 0);
    const auto sealedLines = lines(text);
    ASSERT_FALSE(sealedLines.empty());
    for (std::size_t i = 0; i < sealedLines.size(); ++i) {
        const std::string& line = sealedLines[i];
        const auto first = line.find(' ');
        const auto second = line.find(' ', first + 1);
        ASSERT_NE(second, std::string::npos) << line;
        EXPECT_EQ(line.substr(0, first), std::to_string(i));
        EXPECT_EQ(kwb::cupti::sealLine(key, i, line.substr(second + 1)), line + "\n");
    }
    EXPECT_NE(sealedLines[0].find("\"t\":\"header\""), std::string::npos);
}
