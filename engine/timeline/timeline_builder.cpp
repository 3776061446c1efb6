#include "engine/timeline/timeline_builder.h"

#include "engine/diagnostics/demangle.h"
#include "engine/timeline/record_reader.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <tuple>
#include <vector>

namespace kwb::timeline {
namespace {

std::uint32_t synchronizationCode(const std::string& type) {
    // The numbers are CUPTI's CUpti_ActivitySynchronizationType, kept in TimelineEvent::detail.
    if (type == "event_synchronize")
        return 1;
    if (type == "stream_wait_event")
        return 2;
    if (type == "stream_synchronize")
        return 3;
    if (type == "context_synchronize")
        return 4;
    return 0;
}

std::string synchronizationName(const std::string& type) {
    if (type == "event_synchronize")
        return "cudaEventSynchronize";
    if (type == "stream_wait_event")
        return "cudaStreamWaitEvent";
    if (type == "stream_synchronize")
        return "cudaStreamSynchronize";
    if (type == "context_synchronize")
        return "cudaDeviceSynchronize";
    return "synchronize";
}

template <typename Lane>
void fillMaxEndPrefix(Lane& lane) {
    lane.maxEndPrefix.resize(lane.events.size());
    std::int64_t running = std::numeric_limits<std::int64_t>::min();
    for (std::size_t i = 0; i < lane.events.size(); ++i) {
        running = std::max(running, lane.events[i].endNs);
        lane.maxEndPrefix[i] = running;
    }
}

// Start order; at equal starts the longer event first, so an enclosing range precedes the
// ranges it contains (the depth pass relies on it).
bool startOrder(const TimelineEvent& a, const TimelineEvent& b) {
    return std::tie(a.startNs, b.endNs, a.nameId) < std::tie(b.startNs, a.endNs, b.nameId);
}

// Nesting depth of each range in a lane sorted by startOrder: the number of ranges still open
// when it starts.
std::uint32_t assignDepths(std::vector<TimelineEvent>& events) {
    std::vector<std::int64_t> openEnds;
    std::uint32_t maxDepth = 0;
    for (auto& e : events) {
        // All ranges that ended by now, not only the innermost: start/end ranges (unlike
        // push/pop) may overlap without nesting.
        std::erase_if(openEnds, [&](std::int64_t end) { return end <= e.startNs; });
        e.detail = static_cast<std::uint32_t>(openEnds.size());
        maxDepth = std::max(maxDepth, e.detail);
        openEnds.push_back(e.endNs);
    }
    return maxDepth;
}

} // namespace

std::uint32_t TimelineBuilder::intern(const std::string& name) {
    auto [it, inserted] = nameIds_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
    if (inserted)
        names_.push_back(name);
    return it->second;
}

void TimelineBuilder::addLine(std::string_view line) {
    ++lines_;
    std::optional<TimelineRecord> record = parseRecordLine(line);
    if (!record) {
        // Blank lines (a trailing newline) are not records and not damage.
        if (line.find_first_not_of(" \t\r\n") != std::string_view::npos)
            ++dropped_.malformed;
        return;
    }
    addRecord(*record);
}

void TimelineBuilder::addRecord(const TimelineRecord& r) {
    ++records_;
    PendingEvent pending;
    pending.device = r.device;
    pending.context = r.context;
    pending.stream = r.stream < 0 ? kSynchronizationLane : static_cast<std::uint32_t>(r.stream);
    pending.event.startNs = r.start;
    pending.event.endNs = r.end;
    if (r.context != 0 && (r.type == RecordType::Kernel || r.type == RecordType::Memcpy ||
                           r.type == RecordType::Memset))
        contextDevices_.try_emplace(r.context, r.device);
    switch (r.type) {
    case RecordType::Kernel:
        pending.event.kind = EventKind::Kernel;
        pending.event.nameId = intern(r.name);
        pending.event.detail = static_cast<std::uint32_t>(launches_.size());
        launches_.push_back(r.launch);
        events_.push_back(pending);
        break;
    case RecordType::Memcpy:
    case RecordType::Memset: {
        const bool copy = r.type == RecordType::Memcpy;
        pending.event.kind = copy ? EventKind::Memcpy : EventKind::Memset;
        const std::string kind = copy ? (r.detail.empty() ? "unknown" : r.detail) : "memset";
        pending.event.nameId = intern(copy ? "Memcpy " + kind : "Memset");
        pending.event.detail = static_cast<std::uint32_t>(transfers_.size());
        transfers_.push_back({r.bytes, kind});
        events_.push_back(pending);
        break;
    }
    case RecordType::Sync:
        pending.event.kind = EventKind::Sync;
        pending.event.nameId = intern(synchronizationName(r.detail));
        pending.event.detail = synchronizationCode(r.detail);
        pending.stream = kSynchronizationLane;
        pending.resolveDeviceFromContext = true;
        events_.push_back(pending);
        break;
    case RecordType::Marker: {
        OpenMarker& m = markers_[r.id];
        if (r.flag == MarkerFlag::End) {
            m.haveEnd = true;
            m.end = r.start;
        } else {
            m.haveStart = true;
            m.start = r.start;
            m.thread = r.thread;
            m.nameId = intern(r.name.empty() ? "(unnamed range)" : r.name);
            if (r.flag == MarkerFlag::Instant) {
                m.haveEnd = true;
                m.end = r.start;
            }
        }
        break;
    }
    case RecordType::Device:
        deviceNames_.try_emplace(r.device, r.name);
        break;
    case RecordType::Context:
        contextDevices_[r.context] = r.device;
        break;
    case RecordType::Dropped:
        dropped_.cuptiDropped += r.droppedCupti;
        dropped_.malformed += r.droppedUnknown;
        reportedWriteFailures_ += r.writeFailures;
        break;
    case RecordType::Header:
        sawHeader_ = true;
        break;
    case RecordType::Error:
        errors_.push_back(r.name);
        break;
    case RecordType::End:
        sawEnd_ = true;
        endWriteFailures_ = std::max(endWriteFailures_, r.writeFailures);
        break;
    case RecordType::Unknown:
        ++dropped_.malformed;
        break;
    }
}

TimelineSnapshot TimelineBuilder::finish() const {
    auto t = std::make_shared<KernelTimeline>();
    t->names = names_;
    t->demangledNames.reserve(names_.size());
    for (const auto& n : names_)
        t->demangledNames.push_back(diagnostics::demangleSymbol(n));
    t->launches = launches_;
    t->transfers = transfers_;
    t->dropped = dropped_;
    // Write failures arrive as deltas; the end record carries the total, including any that
    // could not be reported before it.
    t->dropped.bufferOverflow = std::max(reportedWriteFailures_, endWriteFailures_);
    if (!deviceNames_.empty())
        t->deviceName = deviceNames_.begin()->second;

    std::int64_t origin = std::numeric_limits<std::int64_t>::max();
    std::int64_t latest = std::numeric_limits<std::int64_t>::min();
    for (const auto& p : events_) {
        origin = std::min(origin, p.event.startNs);
        latest = std::max(latest, p.event.endNs);
    }
    for (const auto& [id, m] : markers_) {
        if (m.haveStart) {
            origin = std::min(origin, m.start);
            latest = std::max(latest, m.start);
        }
        if (m.haveStart && m.haveEnd)
            latest = std::max(latest, m.end);
    }
    if (origin == std::numeric_limits<std::int64_t>::max())
        return t; // nothing timed yet
    t->originNs = origin;
    t->endNs = latest - origin;

    std::map<std::pair<std::uint32_t, std::uint32_t>, StreamLane> lanes;
    for (const auto& p : events_) {
        std::uint32_t device = p.device;
        if (p.resolveDeviceFromContext) {
            auto it = contextDevices_.find(p.context);
            device = it == contextDevices_.end() ? 0 : it->second;
        }
        StreamLane& lane = lanes[{device, p.stream}];
        TimelineEvent e = p.event;
        e.startNs -= origin;
        e.endNs -= origin;
        lane.events.push_back(e);
        if (e.kind == EventKind::Kernel)
            ++t->kernelCount;
    }
    for (auto& [key, lane] : lanes) {
        lane.deviceId = key.first;
        lane.streamId = key.second;
        lane.label =
            "GPU " + std::to_string(key.first) +
            (key.second == kSynchronizationLane ? " · synchronization"
                                                : " · stream " + std::to_string(key.second));
        std::stable_sort(lane.events.begin(), lane.events.end(), startOrder);
        indexStreamLane(lane);
        t->streams.push_back(std::move(lane));
    }

    std::map<std::uint32_t, RangeLane> ranges;
    for (const auto& [id, m] : markers_) {
        if (!m.haveStart)
            continue; // an end whose start has not arrived (or was dropped)
        TimelineEvent e;
        e.kind = EventKind::Range;
        e.nameId = m.nameId;
        e.startNs = m.start - origin;
        e.endNs = (m.haveEnd ? m.end : latest) - origin; // still open: up to now
        ranges[m.thread].events.push_back(e);
    }
    for (auto& [thread, lane] : ranges) {
        lane.threadId = thread;
        lane.label = "NVTX · thread " + std::to_string(thread);
        std::sort(lane.events.begin(), lane.events.end(), startOrder);
        lane.maxDepth = assignDepths(lane.events);
        fillMaxEndPrefix(lane);
        t->ranges.push_back(std::move(lane));
    }

    std::map<std::uint32_t, NameStatistics> stats;
    for (const auto& p : events_) {
        if (p.event.kind != EventKind::Kernel)
            continue;
        const std::int64_t d = p.event.durationNs();
        auto [it, fresh] = stats.try_emplace(p.event.nameId);
        NameStatistics& s = it->second;
        if (fresh) {
            s.nameId = p.event.nameId;
            s.minNs = d;
            s.maxNs = d;
        }
        ++s.count;
        s.totalNs += d;
        s.minNs = std::min(s.minNs, d);
        s.maxNs = std::max(s.maxNs, d);
    }
    for (auto& [id, s] : stats) {
        s.meanNs = static_cast<double>(s.totalNs) / static_cast<double>(s.count);
        t->kernelStatistics.push_back(s);
    }
    std::sort(t->kernelStatistics.begin(), t->kernelStatistics.end(),
              [](const NameStatistics& a, const NameStatistics& b) {
                  return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.nameId < b.nameId;
              });
    return t;
}

} // namespace kwb::timeline
