#include "engine/timeline/kernel_timeline.h"

#include <algorithm>
#include <limits>

namespace kwb::timeline {

std::string toString(EventKind kind) {
    switch (kind) {
    case EventKind::Kernel:
        return "kernel";
    case EventKind::Memcpy:
        return "memcpy";
    case EventKind::Memset:
        return "memset";
    case EventKind::Sync:
        return "sync";
    case EventKind::Range:
        return "range";
    }
    return "unknown";
}

void indexStreamLane(StreamLane& lane) {
    const std::size_t n = lane.events.size();
    lane.maxEndPrefix.resize(n);
    lane.busyPrefix.resize(n + 1);
    std::int64_t maxEnd = std::numeric_limits<std::int64_t>::min();
    std::int64_t busy = 0;
    lane.busyPrefix[0] = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const TimelineEvent& e = lane.events[i];
        maxEnd = std::max(maxEnd, e.endNs);
        lane.maxEndPrefix[i] = maxEnd;
        busy += e.durationNs();
        lane.busyPrefix[i + 1] = busy;
    }
}

std::pair<std::size_t, std::size_t> visibleRange(const std::vector<TimelineEvent>& events,
                                                 const std::vector<std::int64_t>& maxEndPrefix,
                                                 std::int64_t t0, std::int64_t t1) {
    if (events.empty() || t1 < t0)
        return {0, 0};
    // Events starting after t1 cannot be visible; start order makes that a suffix.
    const auto last =
        std::upper_bound(events.begin(), events.end(), t1,
                         [](std::int64_t t, const TimelineEvent& e) { return t < e.startNs; });
    // Every event before the first prefix maximum reaching t0 ends before the view: a prefix.
    std::size_t first = 0;
    if (maxEndPrefix.size() == events.size()) {
        first = static_cast<std::size_t>(
            std::lower_bound(maxEndPrefix.begin(), maxEndPrefix.end(), t0) - maxEndPrefix.begin());
    }
    const auto lastIndex = static_cast<std::size_t>(last - events.begin());
    return {std::min(first, lastIndex), lastIndex};
}

} // namespace kwb::timeline
