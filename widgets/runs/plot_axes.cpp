#include "widgets/runs/plot_axes.h"

#include <algorithm>
#include <cmath>

namespace kwb::ui {

std::vector<double> niceTicks(AxisRange range, int maxTicks) {
    std::vector<double> ticks;
    if (!(range.span() > 0) || maxTicks < 2 || !std::isfinite(range.span()))
        return ticks;
    const double rough = range.span() / (maxTicks - 1);
    const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
    double step = magnitude * 10;
    for (double factor : {1.0, 2.0, 5.0, 10.0})
        if (magnitude * factor >= rough) {
            step = magnitude * factor;
            break;
        }
    const double first = std::ceil(range.min / step - 1e-9) * step;
    for (double t = first; t <= range.max + step * 1e-9; t += step)
        ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    return ticks;
}

AxisRange fittedRange(const std::vector<double>& values, std::vector<double> alwaysShow) {
    std::vector<double> all = values;
    all.insert(all.end(), alwaysShow.begin(), alwaysShow.end());
    all.erase(std::remove_if(all.begin(), all.end(), [](double v) { return !std::isfinite(v); }),
              all.end());
    if (all.empty())
        return {0.0, 1.0};
    auto [lo, hi] = std::minmax_element(all.begin(), all.end());
    double min = *lo;
    double max = *hi;
    if (max - min < 1e-12) {
        min -= 0.5;
        max += 0.5;
    }
    const double pad = (max - min) * 0.08;
    return {min - pad, max + pad};
}

QPointF PlotAxes::toPixel(QPointF value) const {
    const double fx = x_.span() != 0 ? (value.x() - x_.min) / x_.span() : 0.5;
    const double fy = y_.span() != 0 ? (value.y() - y_.min) / y_.span() : 0.5;
    return {area_.left() + fx * area_.width(), area_.bottom() - fy * area_.height()};
}

QPointF PlotAxes::toValue(QPointF pixel) const {
    const double fx = area_.width() != 0 ? (pixel.x() - area_.left()) / area_.width() : 0.0;
    const double fy = area_.height() != 0 ? (area_.bottom() - pixel.y()) / area_.height() : 0.0;
    return {x_.min + fx * x_.span(), y_.min + fy * y_.span()};
}

int nearestPointIndex(const std::vector<QPointF>& pixels, QPointF cursor, double radius) {
    int best = -1;
    double bestDistance = radius * radius;
    for (std::size_t i = 0; i < pixels.size(); ++i) {
        const QPointF d = pixels[i] - cursor;
        const double distance = d.x() * d.x() + d.y() * d.y();
        if (distance <= bestDistance) {
            bestDistance = distance;
            best = static_cast<int>(i);
        }
    }
    return best;
}

} // namespace kwb::ui
