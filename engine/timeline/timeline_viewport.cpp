#include "engine/timeline/timeline_viewport.h"

#include <algorithm>

namespace kwb::timeline {

void TimelineViewport::setExtent(double extentNs) {
    extentNs_ = std::max(extentNs, kMinimumSpanNs);
    stack_.clear();
    t0_ = 0.0;
    t1_ = extentNs_;
}

void TimelineViewport::setPlotArea(double leftPx, double widthPx) {
    leftPx_ = leftPx;
    widthPx_ = std::max(widthPx, 1.0);
}

void TimelineViewport::setRange(double t0, double t1) {
    if (t1 < t0)
        std::swap(t0, t1);
    double span = std::clamp(t1 - t0, kMinimumSpanNs, extentNs_);
    // Keep the requested centre when the span had to grow, so a tiny selection zooms in place.
    const double centre = (t0 + t1) / 2.0;
    double start = (t1 - t0 < span) ? centre - span / 2.0 : t0;
    start = std::clamp(start, 0.0, extentNs_ - span);
    t0_ = start;
    t1_ = start + span;
}

void TimelineViewport::zoomAt(double xPx, double factor) {
    if (factor <= 0.0)
        return;
    const double anchor = timeAt(xPx);
    const double fraction = (xPx - leftPx_) / widthPx_;
    const double span = std::clamp(spanNs() / factor, kMinimumSpanNs, extentNs_);
    setRange(anchor - fraction * span, anchor - fraction * span + span);
}

void TimelineViewport::panByPixels(double dxPx) {
    const double shift = -dxPx * nsPerPixel();
    const double span = spanNs();
    const double start = std::clamp(t0_ + shift, 0.0, extentNs_ - span);
    t0_ = start;
    t1_ = start + span;
}

void TimelineViewport::zoomToRange(double t0, double t1) {
    stack_.push_back({t0_, t1_});
    setRange(t0, t1);
}

void TimelineViewport::back() {
    if (stack_.empty())
        return;
    const Window previous = stack_.back();
    stack_.pop_back();
    setRange(previous.t0, previous.t1);
}

void TimelineViewport::reset() {
    stack_.clear();
    t0_ = 0.0;
    t1_ = extentNs_;
}

} // namespace kwb::timeline
