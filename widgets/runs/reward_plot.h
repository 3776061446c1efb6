#pragma once

#include "widgets/runs/plot_axes.h"

#include <QColor>
#include <QFontMetrics>
#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

namespace kwb::ui {

struct PlotPoint {
    double x = 0;
    double y = 0;
    qint64 episodeId = 0; // 0: an aggregate, not one episode's step
    qint64 step = 0;      // the event's sequence number
    QString label;        // the hover text
};

struct PlotSeries {
    QString name;
    QColor color;
    std::vector<PlotPoint> points;
};

// A line plot drawn with QPainter: series of points over evaluation steps, round ticks, an
// optional reference line (1.0x for speed-ups), a legend. Hovering a point shows its label;
// clicking one that belongs to an episode emits stepSelected. Without points it says what
// would appear.
class RewardPlot : public QWidget {
    Q_OBJECT
public:
    static constexpr double kHitRadius = 8.0;

    explicit RewardPlot(QWidget* parent = nullptr);
    // A tick's label, short enough for the margin beside the axis label: thousands and millions
    // with a suffix ("12k", not "1.2e+04", which ran into the label).
    static QString tickText(double value);
    // An axis label that fits `length` pixels in `metrics`' font: shortened with an ellipsis
    // when longer (a y label runs along the plot's height, which a small dock makes short).
    static QString fittedLabel(const QString& label, const QFontMetrics& metrics, int length);

    void setTitle(const QString& title);
    void setAxisLabels(const QString& x, const QString& y);
    void setEmptyText(const QString& text);
    void setSeries(std::vector<PlotSeries> series);
    void setReferenceLine(std::optional<double> y);
    // The y range always shown (e.g. the reward's -1..3), widened if a value falls outside.
    void setMinimumYRange(std::optional<AxisRange> range);

    const std::vector<PlotSeries>& series() const { return series_; }
    int pointCount() const;
    PlotAxes axes() const; // for the current size
    QPointF pixelOf(int series, int point) const;
    // (series, point) under the cursor, within kHitRadius pixels.
    std::optional<std::pair<int, int>> pointAt(QPointF cursor) const;
    // The tooltip for the point under the cursor; empty when there is none.
    QString hoverTextAt(QPointF cursor) const;
    // Where the title and, with no points, the empty text are drawn: the empty text takes the
    // room below the title, so a short plot's long explanation never prints over its title.
    QRectF titleArea() const;
    QRectF emptyTextArea() const;

    QSize sizeHint() const override { return {480, 220}; }
    QSize minimumSizeHint() const override { return {200, 120}; }

signals:
    void stepSelected(qint64 episodeId, qint64 stepIndex);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRectF plotArea() const;

    QString title_;
    QString xLabel_;
    QString yLabel_;
    QString emptyText_;
    std::vector<PlotSeries> series_;
    std::optional<double> reference_;
    std::optional<AxisRange> minimumY_;
};

} // namespace kwb::ui
