#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kwb::timeline {

// What one timeline event is. Kernel, Memcpy, Memset and Sync come from CUPTI activity records;
// Range is an NVTX push/pop range (the harness marks phases and timed iterations with them).
enum class EventKind : std::uint8_t { Kernel, Memcpy, Memset, Sync, Range };
std::string toString(EventKind kind);

// One event as drawn: 32 bytes, so a million kernels fit in 32 MB and stay cache-friendly for
// the binary search and the folding pass of the renderer. Details that only a hover or a click
// needs live in side tables, reached through `detail`.
struct TimelineEvent {
    std::int64_t startNs = 0; // relative to KernelTimeline::originNs
    std::int64_t endNs = 0;
    std::uint32_t nameId = 0; // index into KernelTimeline::names
    std::uint32_t detail = 0; // Kernel: index into launches; Memcpy/Memset: into transfers;
                              // Range: nesting depth; Sync: CUPTI synchronization type
    EventKind kind = EventKind::Kernel;
    std::uint8_t reserved[7] = {};

    std::int64_t durationNs() const { return endNs - startNs; }
};
static_assert(sizeof(TimelineEvent) == 32);

struct KernelLaunch {
    std::uint32_t grid[3] = {1, 1, 1};
    std::uint32_t block[3] = {1, 1, 1};
    std::uint32_t registersPerThread = 0;
    std::uint32_t staticSharedBytes = 0;
    std::uint32_t dynamicSharedBytes = 0;
    std::uint32_t localBytesPerThread = 0;
    std::uint32_t correlationId = 0;
};

struct Transfer {
    std::uint64_t bytes = 0;
    std::string copyKind; // "HtoD", "DtoH", "DtoD", "memset", ...
};

// One lane: the events of one (device, stream) in start order. CUDA serialises work on a stream,
// so kernels in a lane do not overlap and endNs is non-decreasing as well; `maxEndPrefix` still
// guards the binary search against records that arrive with overlapping clocks.
struct StreamLane {
    std::uint32_t deviceId = 0;
    std::uint32_t streamId = 0;
    std::string label; // "GPU 0 · stream 7"
    std::vector<TimelineEvent> events;
    std::vector<std::int64_t> maxEndPrefix; // maxEndPrefix[i] = max(events[0..i].endNs)
    // busyPrefix[i] = the summed durations of events[0..i), size events.size() + 1: the busy
    // time of any index range in O(1), which the zoomed-out density needs per pixel column.
    std::vector<std::int64_t> busyPrefix;
};

// Fills a stream lane's maxEndPrefix and busyPrefix from its events (sorted by start).
void indexStreamLane(StreamLane& lane);

// NVTX ranges, one lane per thread that pushed them; nesting depth is TimelineEvent::detail.
struct RangeLane {
    std::uint32_t threadId = 0;
    std::string label;
    std::vector<TimelineEvent> events; // start order
    std::vector<std::int64_t> maxEndPrefix;
    std::uint32_t maxDepth = 0;
};

// Per-kernel-name statistics, sorted by total time descending.
struct NameStatistics {
    std::uint32_t nameId = 0;
    std::uint64_t count = 0;
    std::int64_t totalNs = 0;
    std::int64_t minNs = 0;
    std::int64_t maxNs = 0;
    double meanNs = 0.0;
};

// Records the injection library could not deliver: CUPTI's own dropped count, records it saw
// but could not parse, and buffers lost because the engine side fell behind.
struct DroppedCounts {
    std::uint64_t cuptiDropped = 0;
    std::uint64_t malformed = 0;
    std::uint64_t bufferOverflow = 0;
    std::uint64_t total() const { return cuptiDropped + malformed + bufferOverflow; }
};

// An immutable, render-ready timeline. Built once by TimelineBuilder and shared read-only
// (std::shared_ptr<const KernelTimeline>) between the engine, the CLI and the GUI.
struct KernelTimeline {
    std::int64_t originNs = 0;               // absolute CUPTI timestamp of the earliest event
    std::int64_t endNs = 0;                  // relative end of the latest event
    std::vector<std::string> names;          // raw (mangled) kernel / range names
    std::vector<std::string> demangledNames; // same index as names; equal when not mangled
    std::vector<StreamLane> streams;         // sorted by (deviceId, streamId)
    std::vector<RangeLane> ranges;
    std::vector<KernelLaunch> launches;
    std::vector<Transfer> transfers;
    std::vector<NameStatistics> kernelStatistics;
    DroppedCounts dropped;
    std::string deviceName;
    std::uint64_t kernelCount = 0;

    const std::string& displayName(std::uint32_t nameId) const { return demangledNames[nameId]; }
};

using TimelineSnapshot = std::shared_ptr<const KernelTimeline>;

// Index range [first, last) of events that may intersect [t0, t1] (relative ns): binary search
// on start for the upper end, and on maxEndPrefix for the lower end. O(log n).
std::pair<std::size_t, std::size_t> visibleRange(const std::vector<TimelineEvent>& events,
                                                 const std::vector<std::int64_t>& maxEndPrefix,
                                                 std::int64_t t0, std::int64_t t1);

} // namespace kwb::timeline
