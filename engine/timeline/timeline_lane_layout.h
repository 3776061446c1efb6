#pragma once

#include <optional>
#include <vector>

namespace kwb::timeline {
struct KernelTimeline;
}

namespace kwb::timeline {

// One drawn row of the timeline: an NVTX range lane has one row per nesting depth, a stream
// lane has one row (CUDA serialises a stream, so its kernels never overlap).
struct LaneRow {
    enum class Kind { Range, Stream };
    Kind kind = Kind::Stream;
    int lane = 0;  // index into KernelTimeline::ranges or ::streams
    int depth = 0; // range nesting depth; 0 for streams
    double top = 0.0;
    double height = 0.0;
    bool firstOfLane = true; // where the lane label and separator go
};

// Where each row sits vertically: the ruler on top, NVTX phases next (they explain what the
// kernels below belong to), then the streams. Pure maths; `scrollY` moves the rows but not the
// ruler.
class TimelineLaneLayout {
public:
    static constexpr double kRulerHeight = 26.0;
    static constexpr double kRangeRowHeight = 18.0;
    static constexpr double kStreamRowHeight = 24.0;
    static constexpr double kLaneGap = 6.0;

    void build(const KernelTimeline& timeline);
    void clear();

    const std::vector<LaneRow>& rows() const { return rows_; }
    // Height of all rows below the ruler, unscrolled.
    double contentHeight() const { return contentHeight_; }

    // The rows that move; clamps so the content never scrolls off entirely.
    void setScroll(double scrollY, double viewHeight);
    double scrollY() const { return scrollY_; }
    // Row top on screen, after scrolling.
    double screenTop(const LaneRow& row) const { return row.top - scrollY_; }

    // The row under a pixel y (screen coordinates), if any; the ruler and gaps are not rows.
    std::optional<std::size_t> rowAt(double yPx) const;
    // The row of a stream lane or a range lane at a depth, if present.
    std::optional<std::size_t> rowOf(LaneRow::Kind kind, int lane, int depth = 0) const;

private:
    std::vector<LaneRow> rows_;
    double contentHeight_ = 0.0;
    double scrollY_ = 0.0;
};

} // namespace kwb::timeline
