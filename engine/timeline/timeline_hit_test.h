#pragma once

#include "engine/timeline/timeline_folding.h"
#include "engine/timeline/timeline_lane_layout.h"

#include <optional>
#include <vector>

namespace kwb::timeline {
struct KernelTimeline;
}

namespace kwb::timeline {

class TimelineViewport;

// What is under the mouse: one event (count == 1), or a folded block of `count` events spanning
// [startNs, endNs], exactly as the renderer drew it.
struct TimelineHit {
    std::size_t row = 0; // index into TimelineLaneLayout::rows()
    LaneRow::Kind kind = LaneRow::Kind::Stream;
    int lane = 0;
    std::uint32_t eventIndex = 0; // the first event of a folded block
    std::uint32_t count = 1;
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;

    bool folded() const { return count > 1; }
};

// The item of one row's fold output under x. Items are in start order, so a binary search finds
// the candidates; an item narrower than a pixel is still hit within `tolerancePx`.
std::optional<FoldedItem> hitFoldedItem(const std::vector<FoldedItem>& items, double xPx,
                                        const TimelineViewport& viewport, double tolerancePx);

// From a pixel to what the renderer drew there: the row from the layout, then the row folded
// for the current viewport (the same fold the renderer uses, so a hover over a folded block
// reports that block), then a binary search. O(pixels) at worst, independent of event count.
std::optional<TimelineHit> hitTest(const KernelTimeline& timeline, const TimelineLaneLayout& layout,
                                   const TimelineViewport& viewport, double xPx, double yPx,
                                   double minPixels = kDefaultFoldPixels, double tolerancePx = 2.0);

} // namespace kwb::timeline
