#include "widgets/runs/reward_plot.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <algorithm>
#include <cmath>

namespace kwb::ui {
namespace {

constexpr double kLeft = 52, kRight = 14, kTop = 26, kBottom = 34;

} // namespace

QString RewardPlot::fittedLabel(const QString& label, const QFontMetrics& metrics, int length) {
    return metrics.elidedText(label, Qt::ElideRight, std::max(0, length));
}

QString RewardPlot::tickText(double value) {
    const double magnitude = std::abs(value);
    if (magnitude >= 1e6)
        return QString::number(value / 1e6, 'g', 3) + QLatin1Char('M');
    if (magnitude >= 1e4)
        return QString::number(value / 1e3, 'g', 3) + QLatin1Char('k');
    return QString::number(value, 'g', 4);
}

RewardPlot::RewardPlot(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent, false);
}

void RewardPlot::setTitle(const QString& title) {
    title_ = title;
    update();
}

void RewardPlot::setAxisLabels(const QString& x, const QString& y) {
    xLabel_ = x;
    yLabel_ = y;
    update();
}

void RewardPlot::setEmptyText(const QString& text) {
    emptyText_ = text;
    update();
}

void RewardPlot::setSeries(std::vector<PlotSeries> series) {
    series_ = std::move(series);
    update();
}

void RewardPlot::setReferenceLine(std::optional<double> y) {
    reference_ = y;
    update();
}

void RewardPlot::setMinimumYRange(std::optional<AxisRange> range) {
    minimumY_ = range;
    update();
}

int RewardPlot::pointCount() const {
    int count = 0;
    for (const auto& s : series_)
        count += static_cast<int>(s.points.size());
    return count;
}

QRectF RewardPlot::plotArea() const {
    return QRectF(kLeft, kTop, std::max(1.0, width() - kLeft - kRight),
                  std::max(1.0, height() - kTop - kBottom));
}

PlotAxes RewardPlot::axes() const {
    std::vector<double> xs;
    std::vector<double> ys;
    for (const auto& s : series_)
        for (const auto& p : s.points) {
            xs.push_back(p.x);
            ys.push_back(p.y);
        }
    std::vector<double> keepY;
    if (reference_)
        keepY.push_back(*reference_);
    if (minimumY_) {
        keepY.push_back(minimumY_->min);
        keepY.push_back(minimumY_->max);
    }
    AxisRange x = fittedRange(xs);
    AxisRange y = fittedRange(ys, keepY);
    if (!xs.empty()) {
        // Steps are whole numbers: half a step of room on each side keeps the ends clickable.
        const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
        x = {*lo - 0.5, *hi + 0.5};
    }
    return PlotAxes(plotArea(), x, y);
}

QPointF RewardPlot::pixelOf(int series, int point) const {
    const PlotPoint& p =
        series_.at(static_cast<std::size_t>(series)).points.at(static_cast<std::size_t>(point));
    return axes().toPixel({p.x, p.y});
}

std::optional<std::pair<int, int>> RewardPlot::pointAt(QPointF cursor) const {
    const PlotAxes a = axes();
    std::vector<QPointF> pixels;
    std::vector<std::pair<int, int>> owners;
    for (std::size_t s = 0; s < series_.size(); ++s)
        for (std::size_t i = 0; i < series_[s].points.size(); ++i) {
            pixels.push_back(a.toPixel({series_[s].points[i].x, series_[s].points[i].y}));
            owners.emplace_back(static_cast<int>(s), static_cast<int>(i));
        }
    const int hit = nearestPointIndex(pixels, cursor, kHitRadius);
    if (hit < 0)
        return std::nullopt;
    return owners[static_cast<std::size_t>(hit)];
}

QRectF RewardPlot::titleArea() const {
    return QRectF(kLeft, 4, width() - kLeft - kRight, kTop - 6);
}

QRectF RewardPlot::emptyTextArea() const {
    return QRectF(12, kTop, std::max(1.0, width() - 24.0), std::max(1.0, height() - kTop - 8));
}

QString RewardPlot::hoverTextAt(QPointF cursor) const {
    const auto hit = pointAt(cursor);
    if (!hit)
        return {};
    const auto& s = series_[static_cast<std::size_t>(hit->first)];
    const auto& p = s.points[static_cast<std::size_t>(hit->second)];
    return QStringLiteral("<b>%1</b><br>%2").arg(s.name.toHtmlEscaped(), p.label);
}

void RewardPlot::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    painter.fillRect(rect(), pal.color(QPalette::Base));
    QFont bold = font();
    bold.setBold(true);
    painter.setFont(bold);
    painter.setPen(pal.color(QPalette::Text));
    painter.drawText(titleArea(), Qt::AlignLeft | Qt::AlignVCenter, title_);
    painter.setFont(font());

    if (pointCount() == 0) {
        painter.setPen(pal.color(QPalette::PlaceholderText));
        painter.drawText(emptyTextArea(), Qt::AlignCenter | Qt::TextWordWrap, emptyText_);
        return;
    }

    const PlotAxes a = axes();
    const QRectF area = a.area();
    QColor grid = pal.color(QPalette::Text);
    grid.setAlpha(40);
    const QColor axisText = pal.color(QPalette::PlaceholderText);
    for (double t : niceTicks(a.y(), 6)) {
        const double y = a.toPixel({0, t}).y();
        painter.setPen(grid);
        painter.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
        painter.setPen(axisText);
        painter.drawText(QRectF(0, y - 8, kLeft - 6, 16), Qt::AlignRight | Qt::AlignVCenter,
                         tickText(t));
    }
    for (double t : niceTicks(a.x(), std::max(2, static_cast<int>(area.width() / 60)))) {
        if (std::abs(t - std::round(t)) > 1e-9)
            continue; // steps are whole
        const double x = a.toPixel({t, 0}).x();
        painter.setPen(axisText);
        painter.drawText(QRectF(x - 20, area.bottom() + 2, 40, 14), Qt::AlignCenter, tickText(t));
    }
    painter.setPen(axisText);
    painter.drawText(QRectF(area.left(), height() - 16, area.width(), 14), Qt::AlignCenter,
                     xLabel_);
    painter.save();
    painter.translate(10, area.center().y());
    painter.rotate(-90);
    painter.drawText(QRectF(-area.height() / 2, -8, area.height(), 14), Qt::AlignCenter,
                     fittedLabel(yLabel_, painter.fontMetrics(), int(area.height())));
    painter.restore();
    painter.setPen(QPen(pal.color(QPalette::Mid), 1));
    painter.drawRect(area);

    if (reference_) {
        const double y = a.toPixel({0, *reference_}).y();
        painter.setPen(QPen(axisText, 1, Qt::DashLine));
        painter.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
    }

    double legendX = area.right();
    for (auto it = series_.rbegin(); it != series_.rend(); ++it) {
        const int w = painter.fontMetrics().horizontalAdvance(it->name) + 22;
        legendX -= w;
        painter.fillRect(QRectF(legendX, 9, 10, 10), it->color);
        painter.setPen(pal.color(QPalette::Text));
        painter.drawText(QPointF(legendX + 14, 18), it->name);
    }

    painter.setClipRect(area.adjusted(-6, -6, 6, 6));
    for (const auto& s : series_) {
        QPainterPath path;
        for (std::size_t i = 0; i < s.points.size(); ++i) {
            const QPointF p = a.toPixel({s.points[i].x, s.points[i].y});
            i == 0 ? path.moveTo(p) : path.lineTo(p);
        }
        painter.setPen(QPen(s.color, 1.6));
        painter.setBrush(Qt::NoBrush);
        painter.drawPath(path);
        painter.setBrush(s.color);
        for (const auto& point : s.points)
            painter.drawEllipse(a.toPixel({point.x, point.y}), 3.5, 3.5);
    }
}

bool RewardPlot::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (const QString text = hoverTextAt(help->pos()); !text.isEmpty()) {
            QToolTip::showText(help->globalPos(), text, this);
        } else {
            QToolTip::hideText();
            event->ignore();
        }
        return true;
    }
    return QWidget::event(event);
}

void RewardPlot::mouseMoveEvent(QMouseEvent* event) {
    setCursor(pointAt(event->position()) ? Qt::PointingHandCursor : Qt::ArrowCursor);
    QWidget::mouseMoveEvent(event);
}

void RewardPlot::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) {
        if (auto hit = pointAt(event->position())) {
            const auto& p = series_[static_cast<std::size_t>(hit->first)]
                                .points[static_cast<std::size_t>(hit->second)];
            if (p.episodeId != 0) {
                emit stepSelected(p.episodeId, p.step);
                return;
            }
        }
    }
    QWidget::mousePressEvent(event);
}

} // namespace kwb::ui
