#include "widgets/timeline/duration_histogram_view.h"

#include "widgets/models/timeline_format.h"

#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace kwb::ui {

namespace {
constexpr double kMargin = 4.0;
constexpr double kAxisHeight = 16.0;
constexpr double kTitleHeight = 16.0;
} // namespace

DurationHistogramView::DurationHistogramView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setToolTip(tr("Durations of the kernel selected in the table (log axis). Click or drag over "
                  "bars to step through those instances."));
}

void DurationHistogramView::setHistogram(DurationHistogram histogram, const QString& name) {
    histogram_ = std::move(histogram);
    name_ = name;
    selection_.reset();
    hoverBin_ = -1;
    hoverText_.clear();
    update();
}

void DurationHistogramView::clear() {
    setHistogram({}, {});
}

void DurationHistogramView::selectBins(int first, int last) {
    if (histogram_.empty())
        return;
    if (first > last)
        std::swap(first, last);
    first = std::clamp(first, 0, histogram_.binCount() - 1);
    last = std::clamp(last, 0, histogram_.binCount() - 1);
    selection_ = std::pair{first, last};
    update();
    emit binsSelected(first, last);
}

QRectF DurationHistogramView::plotRect() const {
    return QRectF(kMargin, kTitleHeight, width() - 2 * kMargin,
                  height() - kTitleHeight - kAxisHeight);
}

int DurationHistogramView::binAt(double x) const {
    const QRectF plot = plotRect();
    if (histogram_.empty() || x < plot.left() || x >= plot.right())
        return -1;
    return std::clamp(static_cast<int>((x - plot.left()) / plot.width() * histogram_.binCount()), 0,
                      histogram_.binCount() - 1);
}

void DurationHistogramView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QPalette& pal = palette();
    painter.fillRect(rect(), pal.base());
    painter.setPen(pal.color(QPalette::Text));
    if (histogram_.empty()) {
        painter.setPen(pal.color(QPalette::PlaceholderText));
        painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
                         tr("Select a kernel in the table to see its durations."));
        return;
    }
    const QLocale locale;
    const QString title =
        tr("%1 · %2 instances · median %3")
            .arg(name_, locale.toString(static_cast<qulonglong>(histogram_.instances().size())),
                 formatDuration(static_cast<double>(histogram_.medianNs())));
    painter.drawText(
        QRectF(kMargin, 0, width() - 2 * kMargin, kTitleHeight), Qt::AlignVCenter | Qt::AlignLeft,
        fontMetrics().elidedText(title, Qt::ElideMiddle, static_cast<int>(width() - 2 * kMargin)));
    const QRectF plot = plotRect();
    const int bins = histogram_.binCount();
    const double barWidth = plot.width() / bins;
    const QColor bar = pal.color(QPalette::Highlight).darker(110);
    const QColor selected = pal.color(QPalette::Highlight);
    for (int b = 0; b < bins; ++b) {
        const std::uint32_t n = histogram_.count(b);
        if (n == 0)
            continue;
        // A square-root scale keeps a bin of a few outliers visible beside one of thousands.
        const double share = std::sqrt(static_cast<double>(n) / histogram_.maxCount());
        const double h = std::max(1.0, share * plot.height());
        const bool chosen = selection_ && b >= selection_->first && b <= selection_->second;
        QColor color = chosen ? selected : bar;
        if (selection_ && !chosen)
            color.setAlpha(110);
        painter.fillRect(
            QRectF(plot.left() + b * barWidth, plot.bottom() - h, std::max(1.0, barWidth - 1.0), h),
            color);
    }
    if (hoverBin_ >= 0)
        painter.fillRect(
            QRectF(plot.left() + hoverBin_ * barWidth, plot.top(), barWidth, plot.height()),
            QColor(128, 128, 128, 50));
    painter.setPen(pal.color(QPalette::Mid));
    painter.drawLine(plot.bottomLeft(), plot.bottomRight());
    painter.setPen(pal.color(QPalette::Text));
    const QRectF axis(plot.left(), plot.bottom(), plot.width(), kAxisHeight);
    painter.drawText(axis, Qt::AlignVCenter | Qt::AlignLeft,
                     formatDuration(static_cast<double>(histogram_.minNs())));
    painter.drawText(axis, Qt::AlignVCenter | Qt::AlignRight,
                     formatDuration(static_cast<double>(histogram_.maxNs())));
}

void DurationHistogramView::mousePressEvent(QMouseEvent* event) {
    pressBin_ = binAt(event->position().x());
}

void DurationHistogramView::mouseMoveEvent(QMouseEvent* event) {
    const int bin = binAt(event->position().x());
    if (bin != hoverBin_) {
        hoverBin_ = bin;
        if (bin >= 0) {
            const auto [low, high] = histogram_.binRange(bin);
            hoverText_ = tr("%1 – %2: %3 instances")
                             .arg(formatDuration(low), formatDuration(high))
                             .arg(histogram_.count(bin));
            QToolTip::showText(event->globalPosition().toPoint(), hoverText_, this);
        } else {
            hoverText_.clear();
        }
        update();
    }
}

void DurationHistogramView::mouseReleaseEvent(QMouseEvent* event) {
    const int bin = binAt(event->position().x());
    if (pressBin_ >= 0 && bin >= 0)
        selectBins(pressBin_, bin);
    pressBin_ = -1;
}

void DurationHistogramView::leaveEvent(QEvent*) {
    hoverBin_ = -1;
    hoverText_.clear();
    update();
}

} // namespace kwb::ui
