#pragma once

#include "engine/timeline/kernel_timeline.h"

#include <cstdint>
#include <string>

namespace kwb::timeline {

// One line of a "kwb-cupti/1" record file (written by engine/cupti/activity_lines.cpp), parsed.
// Timestamps are CUPTI's absolute nanoseconds.
enum class RecordType {
    Header,
    Kernel,
    Memcpy,
    Memset,
    Sync,
    Marker,
    Device,
    Context,
    Dropped,
    Error,
    End,
    Unknown, // a well-formed line of a type this reader does not know (a newer writer)
};

enum class MarkerFlag { Start, End, Instant };

struct TimelineRecord {
    RecordType type = RecordType::Unknown;
    std::uint32_t device = 0;
    std::uint32_t context = 0;
    std::int64_t stream = -1; // -1: not tied to a stream (context-wide synchronisation)
    std::int64_t start = 0;   // also the marker's timestamp
    std::int64_t end = 0;
    KernelLaunch launch;
    std::uint64_t bytes = 0;
    std::string name;     // kernel / marker / device name, error message
    std::string detail;   // copy kind, synchronisation type, marker domain
    std::uint32_t id = 0; // marker id; header: pid
    MarkerFlag flag = MarkerFlag::Instant;
    std::uint32_t thread = 0;
    std::uint64_t droppedCupti = 0;
    std::uint64_t droppedUnknown = 0;
    std::uint64_t writeFailures = 0;
};

} // namespace kwb::timeline
