#include "engine/timeline/perfetto_export.h"

#include "engine/timeline/timeline_builder.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace kwb::timeline {
namespace {

using nlohmann::json;

// Microseconds with nanosecond resolution: the trace format's unit is the microsecond.
double micros(std::int64_t ns) {
    return static_cast<double>(ns) / 1000.0;
}

class EventWriter {
public:
    explicit EventWriter(std::ostream& out) : out_(out) {}
    void write(const json& event) {
        out_ << (first_ ? "\n" : ",\n")
             << event.dump(-1, ' ', false, json::error_handler_t::replace);
        first_ = false;
    }

private:
    std::ostream& out_;
    bool first_ = true;
};

json metadata(const char* name, int pid, std::int64_t tid, json args) {
    json m = {{"name", name}, {"ph", "M"}, {"pid", pid}, {"args", std::move(args)}};
    if (tid >= 0)
        m["tid"] = tid;
    return m;
}

json eventArgs(const KernelTimeline& t, const TimelineEvent& e) {
    json args = json::object();
    if (e.kind == EventKind::Kernel && e.detail < t.launches.size()) {
        const KernelLaunch& k = t.launches[e.detail];
        args["grid"] = {k.grid[0], k.grid[1], k.grid[2]};
        args["block"] = {k.block[0], k.block[1], k.block[2]};
        args["registers_per_thread"] = k.registersPerThread;
        args["static_shared_bytes"] = k.staticSharedBytes;
        args["dynamic_shared_bytes"] = k.dynamicSharedBytes;
        args["local_bytes_per_thread"] = k.localBytesPerThread;
        args["correlation_id"] = k.correlationId;
        if (t.names[e.nameId] != t.demangledNames[e.nameId])
            args["mangled_name"] = t.names[e.nameId];
    } else if ((e.kind == EventKind::Memcpy || e.kind == EventKind::Memset) &&
               e.detail < t.transfers.size()) {
        args["bytes"] = t.transfers[e.detail].bytes;
        args["copy_kind"] = t.transfers[e.detail].copyKind;
    } else if (e.kind == EventKind::Sync) {
        args["cupti_sync_type"] = e.detail;
    } else if (e.kind == EventKind::Range) {
        args["depth"] = e.detail;
    }
    return args;
}

json completeEvent(const KernelTimeline& t, const TimelineEvent& e, int pid, std::int64_t tid) {
    return {{"name", t.displayName(e.nameId)},
            {"cat", toString(e.kind)},
            {"ph", "X"},
            {"ts", micros(e.startNs)},
            {"dur", micros(e.durationNs())},
            {"pid", pid},
            {"tid", tid},
            {"args", eventArgs(t, e)}};
}

} // namespace

void writePerfettoTrace(std::ostream& out, const KernelTimeline& t) {
    out << "{\"displayTimeUnit\":\"ns\",\"otherData\":"
        << json{{"format", "kwb-timeline/1"},
                {"origin_ns", t.originNs},
                {"device_name", t.deviceName},
                {"kernel_count", t.kernelCount},
                {"dropped_cupti", t.dropped.cuptiDropped},
                {"dropped_malformed", t.dropped.malformed},
                {"dropped_buffer_overflow", t.dropped.bufferOverflow},
                {"dropped_total", t.dropped.total()}}
               .dump(-1, ' ', false, json::error_handler_t::replace)
        << ",\"traceEvents\":[";
    EventWriter writer(out);
    std::int64_t lastDevice = -1;
    for (const StreamLane& lane : t.streams) {
        const int pid = kDevicePidBase + static_cast<int>(lane.deviceId);
        if (lastDevice != lane.deviceId) {
            lastDevice = lane.deviceId;
            std::string name = "GPU " + std::to_string(lane.deviceId);
            if (!t.deviceName.empty())
                name += " · " + t.deviceName;
            writer.write(metadata("process_name", pid, -1, {{"name", name}}));
            writer.write(metadata("process_sort_index", pid, -1, {{"sort_index", pid}}));
        }
        const bool sync = lane.streamId == kSynchronizationLane;
        const std::int64_t tid = sync ? kSynchronizationTid : lane.streamId;
        writer.write(metadata("thread_name", pid, tid,
                              {{"name", sync ? std::string("synchronization")
                                             : "stream " + std::to_string(lane.streamId)}}));
        for (const TimelineEvent& e : lane.events)
            writer.write(completeEvent(t, e, pid, tid));
    }
    if (!t.ranges.empty()) {
        writer.write(metadata("process_name", kNvtxPid, -1, {{"name", "NVTX ranges"}}));
        writer.write(metadata("process_sort_index", kNvtxPid, -1, {{"sort_index", 0}}));
    }
    for (const RangeLane& lane : t.ranges) {
        writer.write(metadata("thread_name", kNvtxPid, lane.threadId,
                              {{"name", "NVTX · thread " + std::to_string(lane.threadId)}}));
        for (const TimelineEvent& e : lane.events)
            writer.write(completeEvent(t, e, kNvtxPid, lane.threadId));
    }
    out << "\n]}\n";
}

bool writePerfettoTraceFile(const std::string& path, const KernelTimeline& timeline,
                            std::string* error) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (out)
        writePerfettoTrace(out, timeline);
    out.flush();
    if (!out) {
        if (error)
            *error = "cannot write " + path;
        return false;
    }
    return true;
}

} // namespace kwb::timeline
