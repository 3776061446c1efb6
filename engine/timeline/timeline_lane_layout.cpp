#include "engine/timeline/timeline_lane_layout.h"

#include "engine/timeline/kernel_timeline.h"

#include <algorithm>

namespace kwb::timeline {

void TimelineLaneLayout::clear() {
    rows_.clear();
    contentHeight_ = 0.0;
    scrollY_ = 0.0;
}

void TimelineLaneLayout::build(const KernelTimeline& timeline) {
    clear();
    double y = kRulerHeight + kLaneGap;
    for (std::size_t lane = 0; lane < timeline.ranges.size(); ++lane) {
        const auto depths = static_cast<int>(timeline.ranges[lane].maxDepth) + 1;
        for (int depth = 0; depth < depths; ++depth) {
            rows_.push_back({LaneRow::Kind::Range, static_cast<int>(lane), depth, y,
                             kRangeRowHeight, depth == 0});
            y += kRangeRowHeight;
        }
        y += kLaneGap;
    }
    for (std::size_t lane = 0; lane < timeline.streams.size(); ++lane) {
        rows_.push_back(
            {LaneRow::Kind::Stream, static_cast<int>(lane), 0, y, kStreamRowHeight, true});
        y += kStreamRowHeight + kLaneGap;
    }
    contentHeight_ = y;
}

void TimelineLaneLayout::setScroll(double scrollY, double viewHeight) {
    const double maxScroll = std::max(0.0, contentHeight_ - viewHeight);
    scrollY_ = std::clamp(scrollY, 0.0, maxScroll);
}

std::optional<std::size_t> TimelineLaneLayout::rowAt(double yPx) const {
    if (yPx < kRulerHeight)
        return std::nullopt;
    const double contentY = yPx + scrollY_;
    // Rows are in ascending `top` order: binary search the last row starting at or above y.
    auto it = std::upper_bound(rows_.begin(), rows_.end(), contentY,
                               [](double y, const LaneRow& row) { return y < row.top; });
    if (it == rows_.begin())
        return std::nullopt;
    --it;
    if (contentY >= it->top + it->height)
        return std::nullopt;
    return static_cast<std::size_t>(it - rows_.begin());
}

std::optional<std::size_t> TimelineLaneLayout::rowOf(LaneRow::Kind kind, int lane,
                                                     int depth) const {
    for (std::size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].kind == kind && rows_[i].lane == lane && rows_[i].depth == depth)
            return i;
    return std::nullopt;
}

} // namespace kwb::timeline
