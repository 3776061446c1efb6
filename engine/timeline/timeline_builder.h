#pragma once

#include "engine/timeline/kernel_timeline.h"
#include "engine/timeline/timeline_record.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kwb::timeline {

// The lane that holds a device's synchronisation intervals (host waits), apart from its streams:
// a stream synchronisation overlaps the kernels it waits for.
inline constexpr std::uint32_t kSynchronizationLane = 0xFFFFFFFFu;

// Turns record lines into a KernelTimeline, incrementally: feed lines as the injection library
// writes them (in any order), and take a snapshot whenever the view should grow. Not
// thread-safe; one owner feeds and snapshots.
class TimelineBuilder {
public:
    // Parses and adds one line; a malformed line is counted, never thrown.
    void addLine(std::string_view line);
    void addRecord(const TimelineRecord& record);

    // An immutable timeline of everything added so far. May be called any number of times;
    // NVTX ranges still open end at the latest timestamp seen.
    TimelineSnapshot finish() const;

    std::uint64_t linesSeen() const { return lines_; }
    std::uint64_t recordsAdded() const { return records_; }
    bool sawHeader() const { return sawHeader_; }
    bool sawEnd() const { return sawEnd_; }
    // Problems the injection library reported ("error" records), in arrival order.
    const std::vector<std::string>& errors() const { return errors_; }

private:
    struct PendingEvent {
        TimelineEvent event; // absolute times until finish()
        std::uint32_t device = 0;
        std::uint32_t context = 0;
        std::uint32_t stream = 0;
        bool resolveDeviceFromContext = false; // sync records name a context, not a device
    };
    struct OpenMarker {
        bool haveStart = false, haveEnd = false;
        std::int64_t start = 0, end = 0;
        std::uint32_t thread = 0;
        std::uint32_t nameId = 0;
    };

    std::uint32_t intern(const std::string& name);

    std::vector<std::string> names_;
    std::unordered_map<std::string, std::uint32_t> nameIds_;
    std::vector<PendingEvent> events_;
    std::vector<KernelLaunch> launches_;
    std::vector<Transfer> transfers_;
    std::map<std::uint32_t, OpenMarker> markers_;
    std::map<std::uint32_t, std::uint32_t> contextDevices_;
    std::map<std::uint32_t, std::string> deviceNames_;
    std::vector<std::string> errors_;
    DroppedCounts dropped_;
    std::uint64_t reportedWriteFailures_ = 0;
    std::uint64_t endWriteFailures_ = 0;
    std::uint64_t lines_ = 0;
    std::uint64_t records_ = 0;
    bool sawHeader_ = false;
    bool sawEnd_ = false;
};

} // namespace kwb::timeline
