#pragma once

#include <QPointF>
#include <QRectF>
#include <vector>

namespace kwb::ui {

struct AxisRange {
    double min = 0.0;
    double max = 1.0;
    double span() const { return max - min; }
};

// Round tick values (1, 2, 5 times a power of ten) covering [min, max], at most `maxTicks`.
std::vector<double> niceTicks(AxisRange range, int maxTicks);

// The smallest range of round numbers that holds every value and `alwaysShow` (e.g. 0, or 1 for
// a speed-up), with a little room so points do not sit on the frame. Never empty: one value
// gets a unit around it.
AxisRange fittedRange(const std::vector<double>& values, std::vector<double> alwaysShow = {});

// Maps data coordinates to pixels in a plot area and back. y grows upwards in data and
// downwards on screen.
class PlotAxes {
public:
    PlotAxes() = default;
    PlotAxes(QRectF area, AxisRange x, AxisRange y) : area_(area), x_(x), y_(y) {}

    QPointF toPixel(QPointF value) const;
    QPointF toValue(QPointF pixel) const;
    const QRectF& area() const { return area_; }
    AxisRange x() const { return x_; }
    AxisRange y() const { return y_; }

private:
    QRectF area_;
    AxisRange x_;
    AxisRange y_;
};

// The index of the pixel position nearest to `cursor` within `radius` pixels, or -1.
int nearestPointIndex(const std::vector<QPointF>& pixels, QPointF cursor, double radius);

} // namespace kwb::ui
