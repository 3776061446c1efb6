#include "widgets/counters/roofline_chart.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace kwb::ui {
namespace {

bool placeable(const kwb::counters::RooflinePoint& p) {
    return p.flopsPerSecond > 0 && p.dramBytesPerSecond > 0;
}

QString flopsLabel(double exponent) {
    static const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
    const int e = int(std::lround(exponent));
    const int group = std::clamp(e / 3, 0, 5);
    const double mantissa = std::pow(10.0, e - group * 3);
    return QStringLiteral("%1 %2FLOP/s").arg(mantissa).arg(prefixes[group]);
}

// The places tried for a label beside a point, in order: above right, below right, above left,
// below left.
std::vector<QRectF> placesBeside(QPointF at, QSizeF size, double gap) {
    const double w = size.width(), h = size.height();
    return {QRectF(at.x() + gap, at.y() - gap - h, w, h), QRectF(at.x() + gap, at.y() + gap, w, h),
            QRectF(at.x() - gap - w, at.y() - gap - h, w, h),
            QRectF(at.x() - gap - w, at.y() + gap, w, h)};
}

bool overlapsAny(const QRectF& rect, const std::vector<QRectF>& taken) {
    return std::any_of(taken.begin(), taken.end(),
                       [&](const QRectF& other) { return rect.intersects(other); });
}

} // namespace

RooflineChart::RooflineChart(QWidget* parent) : QWidget(parent) {
    setMinimumSize(200, 90);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void RooflineChart::setDots(std::vector<RooflineDot> dots) {
    dots_ = std::move(dots);
    update();
}

void RooflineChart::setSelectedId(int id) {
    selectedId_ = id;
    update();
}

const RooflineDot* RooflineChart::roofDot() const {
    const RooflineDot* best = nullptr;
    for (const RooflineDot& d : dots_)
        if (d.point.peakFlopsPerSecond > 0 && d.point.peakDramBytesPerSecond > 0 &&
            (!best || d.point.peakFlopsPerSecond > best->point.peakFlopsPerSecond))
            best = &d;
    return best;
}

std::optional<RooflineChart::Axes> RooflineChart::axes() const {
    const RooflineDot* roof = roofDot();
    if (!roof)
        return std::nullopt;
    const double ridge = roof->point.ridgeIntensity();
    double xLow = ridge / 100, xHigh = ridge * 100, yLow = roof->point.peakFlopsPerSecond / 1e4;
    for (const RooflineDot& d : dots_)
        for (const auto* p : {&d.point, d.baseline ? &*d.baseline : nullptr})
            if (p && placeable(*p)) {
                xLow = std::min(xLow, p->intensity());
                xHigh = std::max(xHigh, p->intensity());
                yLow = std::min(yLow, p->flopsPerSecond);
            }
    Axes a;
    a.xMin = std::floor(std::log10(xLow));
    a.xMax = std::ceil(std::log10(xHigh));
    a.yMin = std::floor(std::log10(yLow));
    a.yMax = std::ceil(std::log10(roof->point.peakFlopsPerSecond * 1.5));
    const QFontMetrics metrics(font());
    const double left = metrics.horizontalAdvance(QStringLiteral("100 TFLOP/s")) + 10;
    // Room on the right for half of the last decade's label.
    const double right = metrics.horizontalAdvance(QStringLiteral("100000")) / 2.0 + 6;
    a.plot = QRectF(left, metrics.height() + 8, width() - left - right,
                    height() - 2.5 * metrics.height() - 16);
    if (a.plot.width() < 20 || a.plot.height() < 20)
        return std::nullopt;
    return a;
}

std::optional<QPointF> RooflineChart::positionOf(double intensity, double flops) const {
    const auto a = axes();
    if (!a || intensity <= 0 || flops <= 0)
        return std::nullopt;
    const double x = (std::log10(intensity) - a->xMin) / (a->xMax - a->xMin);
    const double y = (std::log10(flops) - a->yMin) / (a->yMax - a->yMin);
    return QPointF(a->plot.left() + x * a->plot.width(), a->plot.bottom() - y * a->plot.height());
}

void RooflineChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    painter.fillRect(rect(), pal.color(QPalette::Base));
    const auto a = axes();
    if (!a) {
        painter.setPen(pal.color(QPalette::PlaceholderText));
        painter.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                         tr("No roofline: it is drawn from ncu's raw page. Open it beside the "
                            "details page (ncu --import REPORT --csv --page raw)."));
        return;
    }
    // Decade grid and labels.
    const QColor grid = pal.color(QPalette::Mid);
    painter.setPen(QPen(grid, 0, Qt::DotLine));
    for (double e = a->xMin; e <= a->xMax; ++e) {
        const double x = positionOf(std::pow(10.0, e), std::pow(10.0, a->yMin))->x();
        painter.drawLine(QPointF(x, a->plot.top()), QPointF(x, a->plot.bottom()));
    }
    for (double e = a->yMin; e <= a->yMax; ++e) {
        const double y = positionOf(std::pow(10.0, a->xMin), std::pow(10.0, e))->y();
        painter.drawLine(QPointF(a->plot.left(), y), QPointF(a->plot.right(), y));
    }
    painter.setPen(pal.color(QPalette::Text));
    const QFontMetrics metrics(font());
    for (double e = a->xMin; e <= a->xMax; ++e) {
        const double x = positionOf(std::pow(10.0, e), std::pow(10.0, a->yMin))->x();
        const QString label = QString::number(std::pow(10.0, e), 'g', 7);
        painter.drawText(QPointF(x - metrics.horizontalAdvance(label) / 2.0,
                                 a->plot.bottom() + metrics.height()),
                         label);
    }
    // Every decade's label where there is room, every second or third on a short chart.
    const double decadeHeight = a->plot.height() / std::max(1.0, a->yMax - a->yMin);
    const int labelEvery = std::max(1, int(std::ceil(1.2 * metrics.height() / decadeHeight)));
    for (double e = a->yMax; e >= a->yMin; e -= labelEvery) {
        const double y = positionOf(std::pow(10.0, a->xMin), std::pow(10.0, e))->y();
        const QString label = flopsLabel(e);
        painter.drawText(QPointF(a->plot.left() - metrics.horizontalAdvance(label) - 6,
                                 y + metrics.ascent() / 2.0),
                         label);
    }
    painter.drawText(QRectF(a->plot.left(), a->plot.bottom() + metrics.height() + 2,
                            a->plot.width(), metrics.height() + 4),
                     Qt::AlignHCenter, tr("FP32 operations per DRAM byte"));
    painter.drawRect(a->plot);

    // The roofs: memory up to the ridge, compute after it.
    const auto& roof = roofDot()->point;
    const double ridge = roof.ridgeIntensity();
    const double xStart = std::pow(10.0, a->xMin), xEnd = std::pow(10.0, a->xMax);
    QPainterPath roofs;
    roofs.moveTo(*positionOf(xStart, roof.peakDramBytesPerSecond * xStart));
    roofs.lineTo(*positionOf(ridge, roof.peakFlopsPerSecond));
    roofs.lineTo(*positionOf(xEnd, roof.peakFlopsPerSecond));
    painter.save();
    painter.setClipRect(a->plot);
    painter.setPen(QPen(pal.color(QPalette::WindowText), 2));
    painter.drawPath(roofs);
    painter.restore();

    // Kernels: the others first, the selected one last and larger.
    const QColor dotColor = pal.color(QPalette::Link);
    const QColor selectedColor = pal.color(QPalette::Highlight);
    const auto drawDot = [&](const RooflineDot& d) {
        if (!placeable(d.point))
            return;
        const QPointF at = *positionOf(d.point.intensity(), d.point.flopsPerSecond);
        const bool selected = d.id == selectedId_;
        if (selected && d.baseline && placeable(*d.baseline)) {
            const QPointF was = *positionOf(d.baseline->intensity(), d.baseline->flopsPerSecond);
            painter.setPen(QPen(selectedColor, 1.5, Qt::DashLine));
            painter.drawLine(was, at);
            painter.setBrush(Qt::NoBrush);
            painter.drawEllipse(was, 5, 5);
        }
        painter.setPen(QPen(pal.color(QPalette::Base), 1));
        painter.setBrush(selected ? selectedColor : dotColor);
        painter.drawEllipse(at, selected ? 7 : 4.5, selected ? 7 : 4.5);
    };
    for (const RooflineDot& d : dots_)
        if (d.id != selectedId_)
            drawDot(d);
    for (const RooflineDot& d : dots_)
        if (d.id == selectedId_)
            drawDot(d);
    painter.setPen(pal.color(QPalette::Text));
    for (const Label& label : labels())
        painter.drawText(label.rect, Qt::AlignLeft | Qt::AlignVCenter, label.text);
}

std::vector<RooflineChart::Label> RooflineChart::labels() const {
    const auto a = axes();
    if (!a)
        return {};
    const QFontMetricsF metrics(font());
    std::vector<QRectF> taken; // the dots, then each label placed
    for (const RooflineDot& d : dots_)
        if (placeable(d.point)) {
            const QPointF at = *positionOf(d.point.intensity(), d.point.flopsPerSecond);
            const double r = d.id == selectedId_ ? 7 : 4.5;
            taken.emplace_back(at.x() - r, at.y() - r, 2 * r, 2 * r);
        }
    std::vector<Label> placed;
    const auto place = [&](QPointF at, const QString& text, double gap) {
        const QSizeF size(metrics.horizontalAdvance(text) + 2, metrics.height());
        const std::vector<QRectF> places = placesBeside(at, size, gap);
        // The first place inside the plot and clear of everything; failing that the first inside
        // the widget and clear; failing that the first place (a chart too small for both).
        const QRectF inside = QRectF(rect());
        QRectF chosen = places.front();
        bool found = false;
        for (const QRectF& bounds : {a->plot, inside}) {
            for (const QRectF& candidate : places)
                if (bounds.contains(candidate) && !overlapsAny(candidate, taken)) {
                    chosen = candidate;
                    found = true;
                    break;
                }
            if (found)
                break;
        }
        taken.push_back(chosen);
        placed.push_back({text, chosen});
    };
    // The selected kernel first: its label matters more than the ridge's.
    for (const RooflineDot& d : dots_)
        if (d.id == selectedId_ && placeable(d.point))
            place(
                *positionOf(d.point.intensity(), d.point.flopsPerSecond),
                tr("[%1] %2% of its roof").arg(d.id).arg(qRound(100 * d.point.shareOfAttainable())),
                9);
    const auto& roof = roofDot()->point;
    const double ridge = roof.ridgeIntensity();
    place(*positionOf(ridge, roof.peakFlopsPerSecond),
          tr("ridge %1 flop/byte").arg(ridge, 0, 'f', 1), 4);
    return placed;
}

void RooflineChart::mousePressEvent(QMouseEvent* event) {
    int nearest = -1;
    double best = 12.0; // pixels: a click this close picks the kernel
    for (const RooflineDot& d : dots_) {
        if (!placeable(d.point))
            continue;
        const auto at = positionOf(d.point.intensity(), d.point.flopsPerSecond);
        const double distance = at ? QLineF(*at, event->position()).length() : best;
        if (distance < best) {
            best = distance;
            nearest = d.id;
        }
    }
    if (nearest >= 0) {
        setSelectedId(nearest);
        emit kernelClicked(nearest);
    }
}

} // namespace kwb::ui
