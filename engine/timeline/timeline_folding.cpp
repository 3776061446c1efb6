#include "engine/timeline/timeline_folding.h"

#include "engine/timeline/kernel_timeline.h"
#include "engine/timeline/timeline_lane_layout.h"
#include "engine/timeline/timeline_viewport.h"

#include <algorithm>
#include <cmath>

namespace kwb::timeline {

namespace {

std::pair<std::size_t, std::size_t> visibleIndices(const std::vector<TimelineEvent>& events,
                                                   const std::vector<std::int64_t>& maxEndPrefix,
                                                   const TimelineViewport& viewport) {
    return visibleRange(events, maxEndPrefix, static_cast<std::int64_t>(std::floor(viewport.t0())),
                        static_cast<std::int64_t>(std::ceil(viewport.t1())));
}

// First index in [from, to) whose event starts at or after `limit`. The answer is usually a few
// events past `from`, so gallop out from there before the binary search: about log(distance)
// comparisons instead of log(lane size), which halves the fold of a zoomed-out million.
std::size_t firstStartingAtOrAfter(const std::vector<TimelineEvent>& events, std::size_t from,
                                   std::size_t to, double limit) {
    std::size_t lo = from; // every event in [from, lo) starts before limit
    std::size_t probe = from;
    std::size_t step = 1;
    while (probe < to && static_cast<double>(events[probe].startNs) < limit) {
        lo = probe + 1;
        probe = from + step;
        step *= 2;
    }
    const std::size_t hi = std::min(probe, to);
    const auto base = events.begin();
    return static_cast<std::size_t>(std::lower_bound(base + static_cast<std::ptrdiff_t>(lo),
                                                     base + static_cast<std::ptrdiff_t>(hi), limit,
                                                     [](const TimelineEvent& e, double t) {
                                                         return static_cast<double>(e.startNs) < t;
                                                     }) -
                                    base);
}

} // namespace

void foldStreamLane(const std::vector<TimelineEvent>& events,
                    const std::vector<std::int64_t>& maxEndPrefix, const TimelineViewport& viewport,
                    double minPixels, std::vector<FoldedItem>& out) {
    out.clear();
    const auto [first, last] = visibleIndices(events, maxEndPrefix, viewport);
    const double minNs = minPixels * viewport.nsPerPixel();
    std::size_t i = first;
    while (i < last) {
        const TimelineEvent& e = events[i];
        if (static_cast<double>(e.durationNs()) >= minNs) {
            out.push_back({e.startNs, e.endNs, static_cast<std::uint32_t>(i), 1});
            ++i;
            continue;
        }
        std::int64_t blockEnd = e.endNs;
        std::size_t j = i + 1;
        // Absorb every event that starts before the block has left a visible gap. On a stream
        // all but the last absorbed event lie inside that gap and are narrow; only the last can
        // be wide, and then it is drawn on its own. Each two rounds move the block end by at
        // least minNs, which bounds the rounds by the pixel width.
        while (j < last) {
            const double limit = static_cast<double>(blockEnd) + minNs;
            const std::size_t k = firstStartingAtOrAfter(events, j, last, limit);
            if (k == j)
                break;
            const TimelineEvent& lastAbsorbed = events[k - 1];
            if (static_cast<double>(lastAbsorbed.durationNs()) >= minNs) {
                if (k - 1 > j)
                    blockEnd = std::max(blockEnd, events[k - 2].endNs);
                j = k - 1;
                break;
            }
            blockEnd = std::max(blockEnd, lastAbsorbed.endNs);
            j = k;
        }
        out.push_back({e.startNs, blockEnd, static_cast<std::uint32_t>(i),
                       static_cast<std::uint32_t>(j - i)});
        i = j;
    }
}

void foldRangeRow(const std::vector<TimelineEvent>& events,
                  const std::vector<std::int64_t>& maxEndPrefix, std::uint32_t depth,
                  const TimelineViewport& viewport, double minPixels,
                  std::vector<FoldedItem>& out) {
    out.clear();
    const auto [first, last] = visibleIndices(events, maxEndPrefix, viewport);
    const double minNs = minPixels * viewport.nsPerPixel();
    bool pendingNarrow = false;
    for (std::size_t i = first; i < last; ++i) {
        const TimelineEvent& e = events[i];
        if (e.detail != depth || static_cast<double>(e.endNs) < viewport.t0())
            continue;
        const bool narrow = static_cast<double>(e.durationNs()) < minNs;
        if (!out.empty() && pendingNarrow && narrow &&
            static_cast<double>(e.startNs) < static_cast<double>(out.back().endNs) + minNs) {
            out.back().endNs = std::max(out.back().endNs, e.endNs);
            ++out.back().count;
            continue;
        }
        out.push_back({e.startNs, e.endNs, static_cast<std::uint32_t>(i), 1});
        pendingNarrow = narrow;
    }
}

const std::vector<TimelineEvent>& rowEvents(const KernelTimeline& timeline, const LaneRow& row) {
    if (row.kind == LaneRow::Kind::Range)
        return timeline.ranges[static_cast<std::size_t>(row.lane)].events;
    return timeline.streams[static_cast<std::size_t>(row.lane)].events;
}

void foldRow(const KernelTimeline& timeline, const LaneRow& row, const TimelineViewport& viewport,
             double minPixels, std::vector<FoldedItem>& out) {
    if (row.kind == LaneRow::Kind::Range) {
        const auto& lane = timeline.ranges[static_cast<std::size_t>(row.lane)];
        foldRangeRow(lane.events, lane.maxEndPrefix, static_cast<std::uint32_t>(row.depth),
                     viewport, minPixels, out);
    } else {
        const auto& lane = timeline.streams[static_cast<std::size_t>(row.lane)];
        foldStreamLane(lane.events, lane.maxEndPrefix, viewport, minPixels, out);
    }
}

} // namespace kwb::timeline
