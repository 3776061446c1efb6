#pragma once

#include "engine/timeline/kernel_timeline.h"

#include <ostream>
#include <string>

namespace kwb::timeline {

// Process ids in the exported trace: GPU d is process kDevicePidBase + d; the NVTX ranges of
// the host threads form one process of their own.
inline constexpr int kDevicePidBase = 1;
inline constexpr int kNvtxPid = 100000;
// Thread id of a device's synchronisation lane (stream lanes use their CUDA stream id).
inline constexpr std::int64_t kSynchronizationTid = 0x7FFFFFFF;

// Writes the timeline as Chrome trace-event JSON (the format chrome://tracing and Perfetto's
// UI open): "X" complete events in microseconds relative to the timeline's origin, one process
// per device and one thread per stream, NVTX ranges on their own tracks, names as "M" metadata,
// and the dropped-record counts in "otherData". Events are streamed, one at a time.
void writePerfettoTrace(std::ostream& out, const KernelTimeline& timeline);

// The same into a file; false with `error` set when it cannot be written.
bool writePerfettoTraceFile(const std::string& path, const KernelTimeline& timeline,
                            std::string* error = nullptr);

} // namespace kwb::timeline
