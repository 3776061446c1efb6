#pragma once

#include "engine/counters/roofline.h"

#include <QWidget>
#include <optional>
#include <vector>

namespace kwb::ui {

// A kernel on the chart: its FP32 point and, when a baseline report is open, where the same
// kernel was there.
struct RooflineDot {
    int id = -1;
    kwb::counters::RooflinePoint point;
    std::optional<kwb::counters::RooflinePoint> baseline;
};

// The DRAM roofline of the kernels of one report, log-log: floating-point work per DRAM byte
// against FLOP/s, under the device's memory roof (peak bandwidth x intensity) and compute roof
// (peak FLOP/s), which meet at the ridge. The selected kernel is drawn in the highlight colour
// with its share of the roof above it, and its baseline place joined to it by a line. A click
// on a kernel selects it.
class RooflineChart : public QWidget {
    Q_OBJECT
public:
    explicit RooflineChart(QWidget* parent = nullptr);

    void setDots(std::vector<RooflineDot> dots);
    void setSelectedId(int id);
    int selectedId() const { return selectedId_; }
    // Where a point is drawn in widget coordinates (nullopt before there is anything to draw or
    // for a point with no work or no DRAM traffic, which a log axis cannot place).
    std::optional<QPointF> positionOf(double intensity, double flopsPerSecond) const;
    QSize sizeHint() const override { return {420, 280}; }

    // The chart's text labels (the ridge's, the selected kernel's) and where they are drawn:
    // each takes the first of its places beside its point that stays inside the plot and clear
    // of the dots and of the labels placed before it, so a short chart does not print one over
    // another.
    struct Label {
        QString text;
        QRectF rect;
    };
    std::vector<Label> labels() const;

signals:
    void kernelClicked(int id);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    struct Axes {
        double xMin = 0, xMax = 0, yMin = 0, yMax = 0; // log10 of the ranges
        QRectF plot;
    };
    std::optional<Axes> axes() const;
    const RooflineDot* roofDot() const; // the dot whose peaks draw the roofs (highest peak)

    std::vector<RooflineDot> dots_;
    int selectedId_ = -1;
};

} // namespace kwb::ui
