#pragma once

#include "engine/timeline/kernel_timeline.h"
#include "engine/timeline/lane_density.h"
#include "engine/timeline/timeline_folding.h"
#include "engine/timeline/timeline_hit_test.h"
#include "engine/timeline/timeline_lane_layout.h"
#include "engine/timeline/timeline_viewport.h"

#include <QColor>
#include <QLineF>
#include <QPen>
#include <QRect>
#include <QRegularExpression>
#include <QWidget>
#include <optional>
#include <vector>

namespace kwb::ui {

// The kernel timeline, drawn the way Tracy draws zones: per row, a binary search to the visible
// events, sub-pixel events folded into counted hatched blocks, then plain rectangle fills. The
// cost of a frame follows the pixels, not the number of kernels.
//
// Navigation: wheel zooms at the cursor; left-drag pans (both axes); right-drag selects a range
// and zooms to it; Backspace goes back through the zoom stack, Home resets; W/S zoom, A/D pan.
// Measure: shift+left-drag, or M then two clicks. Hover shows details; a click selects a kernel
// (a click on a folded block zooms into it).
class TimelineView : public QWidget {
    Q_OBJECT
public:
    static constexpr double kLabelWidth = 150.0;

    enum class FilterMode { Dim, Hide };

    explicit TimelineView(QWidget* parent = nullptr);

    void setTimeline(kwb::timeline::TimelineSnapshot timeline);
    const kwb::timeline::TimelineSnapshot& timeline() const { return timeline_; }
    // Both halves of a comparison share one time axis as long as the longer run.
    void setExtent(double extentNs);

    const timeline::TimelineViewport& viewport() const { return viewport_; }
    const timeline::TimelineLaneLayout& laneLayout() const { return layout_; }

    // Names matching `pattern` stay bright; the others are dimmed or hidden. An empty pattern
    // clears the filter. Returns false (and keeps the old filter) for an invalid expression.
    bool setNameFilter(const QString& pattern, FilterMode mode);
    bool nameMatchesFilter(std::uint32_t nameId) const;

    std::optional<timeline::TimelineHit> hovered() const { return hovered_; }
    std::optional<timeline::TimelineHit> selected() const { return selected_; }
    QString hoverDetails() const { return hoverDetails_; }
    // The measured interval [a, b] in relative ns, when there is one.
    std::optional<std::pair<double, double>> measurement() const;

    // The color a name is drawn with (after the filter), for tests and legends.
    QColor colorOfName(std::uint32_t nameId) const;
    // Items drawn in the last frame, folded blocks counted once: the benchmark's sanity check.
    std::size_t lastFrameItemCount() const { return lastFrameItems_; }

    QSize sizeHint() const override { return {900, 300}; }
    QSize minimumSizeHint() const override { return {300, 120}; }

    // Renders into any paint device (the benchmark and tests paint into a QImage).
    void paintTimeline(QPainter& painter);

public slots:
    void setViewRange(double t0, double t1);
    void zoomToRange(double t0, double t1);
    void zoomBack();
    // The selected event (or folded block) with some room around it (Z).
    void zoomToSelection();
    void resetZoom();
    // Selects the event of a stream lane and brings it into view.
    void selectStreamEvent(int streamLane, quint32 eventIndex);
    void clearSelection();
    void startMeasure();

signals:
    // The visible window changed through user navigation (not through setViewRange).
    void viewRangeChanged(double t0, double t1);
    void eventSelected(const kwb::timeline::TimelineHit& hit);
    void hoverChanged(const QString& details);
    void measurementChanged(double a, double b);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    enum class Drag { None, Pan, Measure, RangeSelect };

    void navigated();
    void updateHover(QPointF pos);
    void clickAt(QPointF pos);
    void paintRow(QPainter& painter, const timeline::LaneRow& row, double top,
                  const std::vector<timeline::FoldedItem>& items);
    bool paintDensityBlock(QPainter& painter, std::size_t lane, const timeline::FoldedItem& item,
                           const QRectF& box);
    void paintLabels(QPainter& painter);
    void paintRuler(QPainter& painter);
    void paintOverlays(QPainter& painter);
    void outline(QPainter& painter, const timeline::TimelineHit& hit, const QColor& color,
                 double width);
    int shortNameWidth(std::uint32_t nameId);

    kwb::timeline::TimelineSnapshot timeline_;
    timeline::TimelineViewport viewport_;
    timeline::TimelineLaneLayout layout_;
    // The fold of each row for the window it was computed for; rows fold lazily when visible.
    struct FoldKey {
        double t0 = 0.0;
        double t1 = 0.0;
        double plotWidth = 0.0;
        const kwb::timeline::KernelTimeline* timeline = nullptr;
        bool operator==(const FoldKey&) const = default;
    };
    FoldKey foldKey_;
    std::vector<std::vector<timeline::FoldedItem>> folds_;
    std::vector<std::uint8_t> foldValid_;

    // Per name, computed once per timeline so a frame does no hashing or string work.
    std::vector<QColor> colors_;
    std::vector<QColor> dimColors_;
    std::vector<QColor> foldColors_;
    std::vector<QColor> textColors_;
    std::vector<QString> shortNames_;
    std::vector<int> shortNameWidths_; // -1 until measured
    std::vector<std::uint8_t> matches_;
    std::vector<std::vector<std::uint32_t>> matchPrefixes_; // per stream lane, while filtering
    std::vector<timeline::DensityColumn> density_;          // scratch of one folded block
    std::vector<QRect> densityRects_;
    bool filterActive_ = false;
    FilterMode filterMode_ = FilterMode::Dim;
    QPen hatchPen_;
    std::vector<QLineF> hatchLines_;

    std::optional<timeline::TimelineHit> hovered_;
    std::optional<timeline::TimelineHit> selected_;
    QString hoverDetails_;

    Drag drag_ = Drag::None;
    QPointF pressPos_;
    QPointF lastPos_;
    bool moved_ = false;
    bool measureClicks_ = false;
    std::optional<double> measureA_;
    std::optional<double> measureB_;
    double rangeSelectA_ = 0.0;
    double rangeSelectB_ = 0.0;
    std::size_t lastFrameItems_ = 0;
};

} // namespace kwb::ui
