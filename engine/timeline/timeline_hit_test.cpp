#include "engine/timeline/timeline_hit_test.h"

#include "engine/timeline/kernel_timeline.h"
#include "engine/timeline/timeline_viewport.h"

#include <algorithm>
#include <cmath>

namespace kwb::timeline {

std::optional<FoldedItem> hitFoldedItem(const std::vector<FoldedItem>& items, double xPx,
                                        const TimelineViewport& viewport, double tolerancePx) {
    if (xPx < viewport.plotLeft() || xPx > viewport.plotLeft() + viewport.plotWidth())
        return std::nullopt;
    const double latest = viewport.timeAt(xPx + tolerancePx);
    // First item starting after the tolerance window; only items before it can contain x.
    auto it =
        std::upper_bound(items.begin(), items.end(), latest, [](double t, const FoldedItem& item) {
            return t < static_cast<double>(item.startNs);
        });
    std::optional<FoldedItem> best;
    double bestDistance = tolerancePx + 1.0;
    // Items do not overlap in a row, so the nearest few before `it` are the only candidates.
    for (int steps = 0; it != items.begin() && steps < 3; ++steps) {
        --it;
        const double left = viewport.xOf(static_cast<double>(it->startNs));
        // Drawn at least one pixel wide, so hit at least one pixel wide.
        const double right = std::max(viewport.xOf(static_cast<double>(it->endNs)), left + 1.0);
        const double distance = xPx < left ? left - xPx : (xPx > right ? xPx - right : 0.0);
        if (distance <= tolerancePx && distance < bestDistance) {
            best = *it;
            bestDistance = distance;
        }
    }
    return best;
}

std::optional<TimelineHit> hitTest(const KernelTimeline& timeline, const TimelineLaneLayout& layout,
                                   const TimelineViewport& viewport, double xPx, double yPx,
                                   double minPixels, double tolerancePx) {
    const auto rowIndex = layout.rowAt(yPx);
    if (!rowIndex)
        return std::nullopt;
    const LaneRow& row = layout.rows()[*rowIndex];
    std::vector<FoldedItem> items;
    foldRow(timeline, row, viewport, minPixels, items);
    const auto item = hitFoldedItem(items, xPx, viewport, tolerancePx);
    if (!item)
        return std::nullopt;
    return TimelineHit{*rowIndex,   row.kind,      row.lane,   item->firstIndex,
                       item->count, item->startNs, item->endNs};
}

} // namespace kwb::timeline
