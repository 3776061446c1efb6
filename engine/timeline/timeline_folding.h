#pragma once

#include <cstdint>
#include <vector>

namespace kwb::timeline {
struct KernelTimeline;
struct TimelineEvent;

class TimelineViewport;
struct LaneRow;

// One thing to draw in a row: a single event (count == 1) or a folded block of `count`
// consecutive events that were each too narrow to see. A block spans from the first event's
// start to the latest end among its events.
struct FoldedItem {
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;
    std::uint32_t firstIndex = 0; // index of the first event in the lane's event array
    std::uint32_t count = 1;

    bool folded() const { return count > 1; }
};

// Events narrower than this many pixels merge with their neighbours (Tracy uses a few pixels).
inline constexpr double kDefaultFoldPixels = 2.0;

// Folds one stream lane for the visible window. Only the visible index range is touched, and runs
// of narrow events are skipped with binary searches, so the work and the output size are bounded
// by the pixel width (about two items per `minPixels`), not by the number of events. Relies on a
// stream's events not overlapping, which CUDA guarantees within a stream.
void foldStreamLane(const std::vector<TimelineEvent>& events,
                    const std::vector<std::int64_t>& maxEndPrefix, const TimelineViewport& viewport,
                    double minPixels, std::vector<FoldedItem>& out);

// Folds the NVTX ranges of one nesting depth. Ranges are few (phases and timed iterations), so a
// linear walk over the visible ones is enough; `count` then counts ranges of that depth only.
void foldRangeRow(const std::vector<TimelineEvent>& events,
                  const std::vector<std::int64_t>& maxEndPrefix, std::uint32_t depth,
                  const TimelineViewport& viewport, double minPixels, std::vector<FoldedItem>& out);

// The items of one laid-out row: dispatches on the row kind.
void foldRow(const KernelTimeline& timeline, const LaneRow& row, const TimelineViewport& viewport,
             double minPixels, std::vector<FoldedItem>& out);

// The events of the row the items came from (a stream lane's or a range lane's array).
const std::vector<TimelineEvent>& rowEvents(const KernelTimeline& timeline, const LaneRow& row);

} // namespace kwb::timeline
