#pragma once

#include "engine/cupti/periodic_flusher.h"
#include "engine/cupti/record_sink.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace kwb::cupti {

// Everything one profiled process holds: the sink, the CUPTI activity kinds it enabled, the
// flush thread and the counters. One instance per process (CUPTI's buffer callbacks are plain
// function pointers, so they reach it through `current()`).
class InjectionSession {
public:
    static InjectionSession& current();

    // Opens the sinks (KWB_TIMELINE_OUT's file; the judge's sealed pipe, see sealed_line.h),
    // enables the activity kinds and starts the flush thread. Any failure is reported (record
    // and stderr) and leaves the process running unprofiled.
    void start();
    // Forces out every record, writes the "end" record and stops the flush thread. Idempotent;
    // a no-op in a forked child, which shares the file but not CUPTI's state.
    void finish();
    // Delivers the records completed so far (the harness calls it before torch's profiler
    // takes CUPTI's buffer callbacks over).
    void flush(bool forced);

    void bufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* maxRecords);
    void bufferCompleted(void* context, std::uint32_t streamId, std::uint8_t* buffer,
                         std::size_t size, std::size_t validSize);

    bool active() const { return active_.load(); }
    void countLaunch() { launches_.fetch_add(1, std::memory_order_relaxed); }

private:
    void report(const std::string& message);
    bool enable(int kind, const char* label, bool required);
    bool openSinks();
    bool countLaunches();
    void writeLines(const std::string& lines, std::uint64_t count);

    RecordSink sink_;   // the timeline file
    RecordSink sealed_; // the judge's pipe, in a candidate's process
    bool kernelRecords_ = false;
    PeriodicFlusher flusher_;
    std::atomic<bool> active_{false};
    std::atomic<bool> finished_{false};
    std::atomic<std::uint64_t> launches_{0};
    pid_t owner_ = 0;
};

} // namespace kwb::cupti
