#pragma once

#include <cstdint>
#include <vector>

namespace kwb::timeline {

// The visible time window of a timeline and the maths between pixels and nanoseconds. Pure (no
// Qt, no painting) so zoom and pan behaviour is tested without a widget. Times are relative
// nanoseconds held as doubles: zooming in deeper than one nanosecond per pixel must stay smooth,
// and 53 bits cover hours of nanoseconds exactly enough.
class TimelineViewport {
public:
    // The smallest span the view zooms into; below this every kernel is wider than the view.
    static constexpr double kMinimumSpanNs = 10.0;

    // The whole timeline [0, extentNs] becomes visible; the zoom stack is cleared.
    void setExtent(double extentNs);
    double extentNs() const { return extentNs_; }

    // The horizontal pixel interval the time axis is drawn into.
    void setPlotArea(double leftPx, double widthPx);
    double plotLeft() const { return leftPx_; }
    double plotWidth() const { return widthPx_; }

    double t0() const { return t0_; }
    double t1() const { return t1_; }
    double spanNs() const { return t1_ - t0_; }
    double nsPerPixel() const { return spanNs() / widthPx_; }

    double xOf(double timeNs) const { return leftPx_ + (timeNs - t0_) / nsPerPixel(); }
    double timeAt(double xPx) const { return t0_ + (xPx - leftPx_) * nsPerPixel(); }

    // Shows [t0, t1], clamped to the extent and to the minimum span. Does not touch the stack.
    void setRange(double t0, double t1);
    // factor > 1 zooms in. The time under xPx stays under xPx unless the extent clamps it.
    void zoomAt(double xPx, double factor);
    // Positive dx moves the content right (the drag direction), i.e. shows earlier times.
    void panByPixels(double dxPx);
    // Keyboard navigation (WASD): a fraction of the visible span, zooming around the centre.
    void panByFraction(double fraction) { panByPixels(-fraction * widthPx_); }
    void zoomAtCentre(double factor) { zoomAt(leftPx_ + widthPx_ / 2.0, factor); }

    // Range-select zoom: remembers the current window so back() returns to it.
    void zoomToRange(double t0, double t1);
    bool canGoBack() const { return !stack_.empty(); }
    void back();
    // Fits the whole extent and forgets the stack.
    void reset();
    std::size_t stackDepth() const { return stack_.size(); }

private:
    struct Window {
        double t0;
        double t1;
    };
    double extentNs_ = 1.0;
    double leftPx_ = 0.0;
    double widthPx_ = 1.0;
    double t0_ = 0.0;
    double t1_ = 1.0;
    std::vector<Window> stack_;
};

} // namespace kwb::timeline
