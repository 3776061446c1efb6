#pragma once

#include "widgets/timeline/duration_histogram.h"

#include <QWidget>
#include <optional>

namespace kwb::ui {

// One kernel's durations as a histogram on a log axis (from DurationHistogram). Hovering a bar
// names its range and count; clicking or dragging over bars selects them, and the pane then
// steps through the instances behind them.
class DurationHistogramView : public QWidget {
    Q_OBJECT
public:
    explicit DurationHistogramView(QWidget* parent = nullptr);

    void setHistogram(DurationHistogram histogram, const QString& name);
    void clear();
    const DurationHistogram& histogram() const { return histogram_; }
    QString name() const { return name_; }
    QString hoverText() const { return hoverText_; }
    // The selected bins, [first, last], when there are.
    std::optional<std::pair<int, int>> selection() const { return selection_; }
    void selectBins(int first, int last);

    // The bar under x, or -1 (tests, hit testing).
    int binAt(double x) const;

    QSize sizeHint() const override { return {320, 110}; }
    QSize minimumSizeHint() const override { return {160, 50}; }

signals:
    void binsSelected(int firstBin, int lastBin);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    QRectF plotRect() const;

    DurationHistogram histogram_;
    QString name_;
    QString hoverText_;
    std::optional<std::pair<int, int>> selection_;
    int pressBin_ = -1;
    int hoverBin_ = -1;
};

} // namespace kwb::ui
