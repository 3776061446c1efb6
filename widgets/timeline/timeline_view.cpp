#include "widgets/timeline/timeline_view.h"

#include "engine/timeline/lane_density.h"
#include "widgets/models/timeline_colors.h"
#include "widgets/models/timeline_event_details.h"
#include "widgets/models/timeline_format.h"

#include <QKeyEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace kwb::ui {

using kwb::timeline::TimelineEvent;

namespace {

constexpr double kClickSlopPx = 3.0;
constexpr double kKeyZoom = 1.25;
constexpr double kKeyPan = 0.1;

// 1, 2 or 5 times a power of ten: ruler steps people can add up in their heads.
double niceStep(double roughNs) {
    if (roughNs <= 1.0)
        return 1.0;
    const double power = std::pow(10.0, std::floor(std::log10(roughNs)));
    for (const double m : {1.0, 2.0, 5.0, 10.0})
        if (m * power >= roughNs)
            return m * power;
    return 10.0 * power;
}

// Diagonal strokes 6 px apart across a folded block, clipped to it by hand. One drawLines call
// per row touches a sixth of the pixels a pattern-brush fill does (the fill cost a millisecond
// per frame with a zoomed-out million kernels). Blocks too narrow to show a stroke get none.
void addHatch(const QRectF& box, std::vector<QLineF>& lines) {
    constexpr double kSpacing = 6.0;
    if (box.width() < 4.0)
        return;
    const double h = box.height();
    const double first = std::floor((box.left() - h) / kSpacing) * kSpacing;
    for (double x = first; x < box.right(); x += kSpacing) {
        QPointF start(x, box.bottom());
        QPointF end(x + h, box.top());
        if (start.x() < box.left())
            start = QPointF(box.left(), box.bottom() - (box.left() - x));
        if (end.x() > box.right())
            end = QPointF(box.right(), box.top() + (x + h - box.right()));
        if (start.x() < end.x())
            lines.emplace_back(start, end);
    }
}

} // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent), hatchPen_(QColor(0, 0, 0, 90), 1.0) {
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumHeight(120);
    setAttribute(Qt::WA_OpaquePaintEvent);
    viewport_.setPlotArea(kLabelWidth, std::max(1.0, width() - kLabelWidth));
}

void TimelineView::setTimeline(kwb::timeline::TimelineSnapshot timeline) {
    timeline_ = std::move(timeline);
    hovered_.reset();
    selected_.reset();
    hoverDetails_.clear();
    measureA_.reset();
    measureB_.reset();
    colors_.clear();
    dimColors_.clear();
    foldColors_.clear();
    textColors_.clear();
    shortNames_.clear();
    shortNameWidths_.clear();
    matches_.clear();
    matchPrefixes_.clear();
    folds_.clear(); // a new snapshot may reuse the old one's address
    filterActive_ = false;
    if (!timeline_) {
        layout_.clear();
        update();
        return;
    }
    const std::size_t names = timeline_->names.size();
    colors_.reserve(names);
    dimColors_.reserve(names);
    foldColors_.reserve(names);
    textColors_.reserve(names);
    shortNames_.reserve(names);
    for (std::size_t id = 0; id < names; ++id) {
        const std::string& display = timeline_->displayName(static_cast<std::uint32_t>(id));
        const QColor color = colorForName(display);
        colors_.push_back(color);
        QColor dim = color;
        dim.setAlpha(45);
        dimColors_.push_back(dim);
        foldColors_.push_back(color.darker(125));
        textColors_.push_back(textColorOn(color));
        shortNames_.push_back(shortKernelName(QString::fromStdString(display)));
    }
    shortNameWidths_.assign(names, -1);
    matches_.assign(names, 1);
    layout_.build(*timeline_);
    layout_.setScroll(0.0, height());
    // A hidden widget gets its resize event only when shown; the benchmark never shows it.
    viewport_.setPlotArea(kLabelWidth, std::max(1.0, width() - kLabelWidth));
    viewport_.setExtent(static_cast<double>(timeline_->endNs));
    update();
}

void TimelineView::setExtent(double extentNs) {
    viewport_.setExtent(extentNs);
    update();
}

bool TimelineView::setNameFilter(const QString& pattern, FilterMode mode) {
    if (pattern.isEmpty()) {
        filterActive_ = false;
        std::fill(matches_.begin(), matches_.end(), 1);
        matchPrefixes_.clear();
        update();
        return true;
    }
    const QRegularExpression expression(pattern, QRegularExpression::CaseInsensitiveOption);
    if (!expression.isValid())
        return false;
    filterActive_ = true;
    filterMode_ = mode;
    if (timeline_)
        for (std::size_t id = 0; id < matches_.size(); ++id)
            matches_[id] = expression
                               .match(QString::fromStdString(
                                   timeline_->displayName(static_cast<std::uint32_t>(id))))
                               .hasMatch();
    // Per stream lane, matches counted up to each event: a folded block or a density column
    // then knows its matches in O(1) however many kernels it holds.
    matchPrefixes_.clear();
    if (timeline_)
        for (const auto& lane : timeline_->streams)
            matchPrefixes_.push_back(timeline::matchPrefix(lane.events, matches_));
    update();
    return true;
}

bool TimelineView::nameMatchesFilter(std::uint32_t nameId) const {
    return !filterActive_ || (nameId < matches_.size() && matches_[nameId]);
}

QColor TimelineView::colorOfName(std::uint32_t nameId) const {
    if (nameId >= colors_.size())
        return {};
    return nameMatchesFilter(nameId) ? colors_[nameId] : dimColors_[nameId];
}

std::optional<std::pair<double, double>> TimelineView::measurement() const {
    if (!measureA_ || !measureB_)
        return std::nullopt;
    return std::pair{std::min(*measureA_, *measureB_), std::max(*measureA_, *measureB_)};
}

void TimelineView::setViewRange(double t0, double t1) {
    if (t0 == viewport_.t0() && t1 == viewport_.t1())
        return;
    viewport_.setRange(t0, t1);
    update();
}

void TimelineView::zoomToRange(double t0, double t1) {
    viewport_.zoomToRange(t0, t1);
    navigated();
}

void TimelineView::zoomToSelection() {
    if (!selected_)
        return;
    // A margin of a fifth each side, and at least a few microseconds, so the neighbours show.
    const double span = std::max(static_cast<double>(selected_->endNs - selected_->startNs), 1.0);
    const double margin = std::max(span * 0.2, 2000.0);
    zoomToRange(static_cast<double>(selected_->startNs) - margin,
                static_cast<double>(selected_->endNs) + margin);
}

void TimelineView::zoomBack() {
    viewport_.back();
    navigated();
}

void TimelineView::resetZoom() {
    viewport_.reset();
    navigated();
}

void TimelineView::selectStreamEvent(int streamLane, quint32 eventIndex) {
    if (!timeline_ || streamLane < 0 ||
        static_cast<std::size_t>(streamLane) >= timeline_->streams.size())
        return;
    const auto& events = timeline_->streams[static_cast<std::size_t>(streamLane)].events;
    if (eventIndex >= events.size())
        return;
    const TimelineEvent& e = events[eventIndex];
    const auto row = layout_.rowOf(timeline::LaneRow::Kind::Stream, streamLane);
    selected_ = timeline::TimelineHit{
        row.value_or(0), timeline::LaneRow::Kind::Stream, streamLane, eventIndex, 1, e.startNs,
        e.endNs};
    // Bring it into view wide enough to see: at least a tenth of the plot.
    const double duration = std::max<double>(static_cast<double>(e.durationNs()), 1.0);
    const double start = static_cast<double>(e.startNs);
    if (viewport_.xOf(start) < viewport_.plotLeft() ||
        viewport_.xOf(start + duration) > viewport_.plotLeft() + viewport_.plotWidth() ||
        duration / viewport_.nsPerPixel() < 4.0) {
        const double span = std::max(duration * 10.0, timeline::TimelineViewport::kMinimumSpanNs);
        viewport_.zoomToRange(start + duration / 2.0 - span / 2.0,
                              start + duration / 2.0 + span / 2.0);
    }
    if (row) {
        const timeline::LaneRow& laneRow = layout_.rows()[*row];
        const double top = layout_.screenTop(laneRow);
        if (top < timeline::TimelineLaneLayout::kRulerHeight || top + laneRow.height > height())
            layout_.setScroll(laneRow.top - height() / 2.0, height());
    }
    emit eventSelected(*selected_);
    navigated();
}

void TimelineView::clearSelection() {
    selected_.reset();
    update();
}

void TimelineView::startMeasure() {
    measureClicks_ = true;
    measureA_.reset();
    measureB_.reset();
    setCursor(Qt::CrossCursor);
    update();
}

void TimelineView::navigated() {
    emit viewRangeChanged(viewport_.t0(), viewport_.t1());
    update();
}

void TimelineView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    viewport_.setPlotArea(kLabelWidth, std::max(1.0, width() - kLabelWidth));
    layout_.setScroll(layout_.scrollY(), height());
}

// ---- input ----------------------------------------------------------------------------------

void TimelineView::mousePressEvent(QMouseEvent* event) {
    if (!timeline_)
        return;
    setFocus(Qt::MouseFocusReason);
    const QPointF pos = event->position();
    const double t = viewport_.timeAt(pos.x());
    pressPos_ = lastPos_ = pos;
    moved_ = false;
    if (event->button() == Qt::LeftButton) {
        if (measureClicks_) {
            if (!measureA_) {
                measureA_ = t;
            } else {
                measureB_ = t;
                measureClicks_ = false;
                unsetCursor();
                emit measurementChanged(measurement()->first, measurement()->second);
            }
            update();
            return;
        }
        if (event->modifiers() & Qt::ShiftModifier) {
            drag_ = Drag::Measure;
            measureA_ = t;
            measureB_ = t;
        } else {
            drag_ = Drag::Pan;
            setCursor(Qt::ClosedHandCursor);
        }
    } else if (event->button() == Qt::RightButton) {
        drag_ = Drag::RangeSelect;
        rangeSelectA_ = rangeSelectB_ = t;
    }
    update();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
    const QPointF pos = event->position();
    if ((pos - pressPos_).manhattanLength() > kClickSlopPx)
        moved_ = true;
    switch (drag_) {
    case Drag::Pan: {
        const QPointF delta = pos - lastPos_;
        lastPos_ = pos;
        if (delta.isNull())
            return;
        viewport_.panByPixels(delta.x());
        layout_.setScroll(layout_.scrollY() - delta.y(), height());
        navigated();
        return;
    }
    case Drag::Measure:
        measureB_ = viewport_.timeAt(pos.x());
        update();
        return;
    case Drag::RangeSelect:
        rangeSelectB_ = viewport_.timeAt(pos.x());
        update();
        return;
    case Drag::None:
        updateHover(pos);
        return;
    }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
    const Drag drag = drag_;
    drag_ = Drag::None;
    unsetCursor();
    switch (drag) {
    case Drag::Pan:
        if (!moved_)
            clickAt(event->position());
        break;
    case Drag::Measure:
        if (moved_)
            emit measurementChanged(measurement()->first, measurement()->second);
        else
            measureA_.reset(), measureB_.reset();
        update();
        break;
    case Drag::RangeSelect:
        if (std::abs(viewport_.xOf(rangeSelectB_) - viewport_.xOf(rangeSelectA_)) >= 4.0)
            zoomToRange(rangeSelectA_, rangeSelectB_);
        update();
        break;
    case Drag::None:
        break;
    }
}

void TimelineView::clickAt(QPointF pos) {
    const auto hit = timeline::hitTest(*timeline_, layout_, viewport_, pos.x(), pos.y());
    if (!hit) {
        clearSelection();
        return;
    }
    if (hit->folded()) {
        // Like Tracy: a folded block opens up when clicked.
        const double margin = static_cast<double>(hit->endNs - hit->startNs) * 0.05;
        zoomToRange(static_cast<double>(hit->startNs) - margin,
                    static_cast<double>(hit->endNs) + margin);
        return;
    }
    selected_ = hit;
    emit eventSelected(*hit);
    update();
}

void TimelineView::updateHover(QPointF pos) {
    std::optional<timeline::TimelineHit> hit;
    if (timeline_)
        hit = timeline::hitTest(*timeline_, layout_, viewport_, pos.x(), pos.y());
    const bool same =
        hit.has_value() == hovered_.has_value() &&
        (!hit || (hit->row == hovered_->row && hit->eventIndex == hovered_->eventIndex &&
                  hit->count == hovered_->count));
    if (same)
        return;
    hovered_ = hit;
    hoverDetails_ = hit ? describeHit(*timeline_, *hit) : QString();
    if (hit)
        QToolTip::showText(mapToGlobal(pos.toPoint()), hoverDetails_, this);
    else
        QToolTip::hideText();
    emit hoverChanged(hoverDetails_);
    update();
}

void TimelineView::leaveEvent(QEvent* event) {
    QWidget::leaveEvent(event);
    if (hovered_) {
        hovered_.reset();
        hoverDetails_.clear();
        emit hoverChanged(hoverDetails_);
        update();
    }
}

void TimelineView::wheelEvent(QWheelEvent* event) {
    if (!timeline_)
        return;
    const QPointF pos = event->position();
    const double steps = event->angleDelta().y() / 120.0;
    if (event->modifiers() & Qt::ShiftModifier) {
        layout_.setScroll(layout_.scrollY() - steps * 40.0, height());
        update();
    } else {
        viewport_.zoomAt(pos.x(), std::pow(1.25, steps));
        navigated();
    }
    hovered_.reset();
    updateHover(pos);
    event->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
    if (!timeline_) {
        QWidget::keyPressEvent(event);
        return;
    }
    switch (event->key()) {
    case Qt::Key_W:
        viewport_.zoomAtCentre(kKeyZoom);
        break;
    case Qt::Key_S:
        viewport_.zoomAtCentre(1.0 / kKeyZoom);
        break;
    case Qt::Key_A:
        viewport_.panByFraction(-kKeyPan);
        break;
    case Qt::Key_D:
        viewport_.panByFraction(kKeyPan);
        break;
    case Qt::Key_Backspace:
        viewport_.back();
        break;
    case Qt::Key_Home:
    case Qt::Key_0:
        viewport_.reset();
        break;
    case Qt::Key_M:
        startMeasure();
        return;
    case Qt::Key_Z:
        zoomToSelection();
        return;
    case Qt::Key_Escape:
        measureClicks_ = false;
        measureA_.reset();
        measureB_.reset();
        unsetCursor();
        clearSelection();
        return;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    navigated();
}

// ---- painting -------------------------------------------------------------------------------

void TimelineView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    paintTimeline(painter);
}

int TimelineView::shortNameWidth(std::uint32_t nameId) {
    int& width = shortNameWidths_[nameId];
    if (width < 0)
        width = fontMetrics().horizontalAdvance(shortNames_[nameId]);
    return width;
}

void TimelineView::paintTimeline(QPainter& painter) {
    const QPalette& pal = palette();
    painter.fillRect(rect(), pal.base());
    lastFrameItems_ = 0;
    if (!timeline_) {
        painter.setPen(pal.color(QPalette::PlaceholderText));
        painter.drawText(rect(), Qt::AlignCenter, tr("No timeline loaded"));
        return;
    }
    painter.save();
    painter.setClipRect(QRectF(kLabelWidth, timeline::TimelineLaneLayout::kRulerHeight,
                               width() - kLabelWidth,
                               height() - timeline::TimelineLaneLayout::kRulerHeight));
    // Hover, selection, filter and scroll repaint without moving in time: reuse the folds.
    const FoldKey key{viewport_.t0(), viewport_.t1(), viewport_.plotWidth(), timeline_.get()};
    if (!(key == foldKey_) || folds_.size() != layout_.rows().size()) {
        foldKey_ = key;
        folds_.assign(layout_.rows().size(), {});
        foldValid_.assign(layout_.rows().size(), 0);
    }
    for (std::size_t i = 0; i < layout_.rows().size(); ++i) {
        const timeline::LaneRow& row = layout_.rows()[i];
        const double top = layout_.screenTop(row);
        if (top + row.height < timeline::TimelineLaneLayout::kRulerHeight || top > height())
            continue;
        if (!foldValid_[i]) {
            timeline::foldRow(*timeline_, row, viewport_, timeline::kDefaultFoldPixels, folds_[i]);
            foldValid_[i] = 1;
        }
        paintRow(painter, row, top, folds_[i]);
    }
    if (hovered_)
        outline(painter, *hovered_, pal.color(QPalette::Text), 1.0);
    if (selected_)
        outline(painter, *selected_, pal.color(QPalette::Highlight), 2.0);
    painter.restore();
    paintLabels(painter);
    paintRuler(painter);
    paintOverlays(painter);
}

void TimelineView::paintRow(QPainter& painter, const timeline::LaneRow& row, double top,
                            const std::vector<timeline::FoldedItem>& items) {
    lastFrameItems_ += items.size();
    const auto& events = timeline::rowEvents(*timeline_, row);
    const double plotLeft = viewport_.plotLeft() - 2.0;
    const double plotRight = viewport_.plotLeft() + viewport_.plotWidth() + 2.0;
    const double boxTop = top + 1.0;
    const double boxHeight = row.height - 2.0;
    const bool hide = filterActive_ && filterMode_ == FilterMode::Hide;
    const QColor foldedFiltered(150, 150, 150, 90);
    hatchLines_.clear();
    for (const timeline::FoldedItem& item : items) {
        // Clamp before converting: at deep zoom an off-screen end is far beyond int range.
        const double x0 = std::max(viewport_.xOf(static_cast<double>(item.startNs)), plotLeft);
        const double x1 = std::min(viewport_.xOf(static_cast<double>(item.endNs)), plotRight);
        const double w = std::max(x1 - x0, 1.0);
        const QRectF box(x0, boxTop, w, boxHeight);
        const TimelineEvent& e = events[item.firstIndex];
        if (item.folded() && row.kind == timeline::LaneRow::Kind::Stream &&
            paintDensityBlock(painter, static_cast<std::size_t>(row.lane), item, box))
            continue;
        if (item.folded()) {
            painter.fillRect(box, filterActive_ ? foldedFiltered : foldColors_[e.nameId]);
            addHatch(box, hatchLines_);
            if (w > 30.0) {
                painter.setPen(filterActive_ ? palette().color(QPalette::Text)
                                             : textColors_[e.nameId]);
                painter.drawText(box.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                                 QStringLiteral("%1×").arg(item.count));
            }
            continue;
        }
        const bool match = nameMatchesFilter(e.nameId);
        if (!match && hide)
            continue;
        painter.fillRect(box, match ? colors_[e.nameId] : dimColors_[e.nameId]);
        if (w < 24.0)
            continue;
        const double textWidth = w - 6.0;
        painter.setPen(match ? textColors_[e.nameId] : palette().color(QPalette::PlaceholderText));
        const QRectF textBox = box.adjusted(3, 0, -3, 0);
        if (shortNameWidth(e.nameId) <= textWidth)
            painter.drawText(textBox, Qt::AlignVCenter | Qt::AlignLeft, shortNames_[e.nameId]);
        else if (textWidth >= 30.0)
            painter.drawText(textBox, Qt::AlignVCenter | Qt::AlignLeft,
                             fontMetrics().elidedText(shortNames_[e.nameId], Qt::ElideRight,
                                                      static_cast<int>(textWidth)));
    }
    if (!hatchLines_.empty()) {
        painter.setPen(hatchPen_);
        painter.drawLines(hatchLines_.data(), static_cast<int>(hatchLines_.size()));
    }
}

// A folded block of a stream lane as its density: per pixel column, a bar as high as the share
// of the column's time its kernels keep the stream busy; with a filter, the matching kernels'
// share of each bar in the highlight colour (alone, when the others are hidden). The label
// gives the block's kernel count, busy share and matches.
bool TimelineView::paintDensityBlock(QPainter& painter, std::size_t lane,
                                     const timeline::FoldedItem& item, const QRectF& box) {
    const timeline::StreamLane& stream = timeline_->streams[lane];
    if (stream.busyPrefix.size() != stream.events.size() + 1)
        return false; // a timeline built without the sums: the plain folded block
    const std::vector<std::uint32_t>* matches =
        filterActive_ && lane < matchPrefixes_.size() ? &matchPrefixes_[lane] : nullptr;
    const int left = static_cast<int>(std::floor(box.left()));
    const int columns = std::max(1, static_cast<int>(std::ceil(box.right())) - left);
    const double t0 = viewport_.timeAt(left);
    const double t1 = viewport_.timeAt(left + columns);
    // Only the block's kernels that start inside the drawn columns: a block reaching past the
    // edge of the view would otherwise pile its off-screen kernels into the edge columns.
    const auto& events = stream.events;
    const auto byStart = [](const TimelineEvent& e, double t) {
        return static_cast<double>(e.startNs) < t;
    };
    const auto blockBegin = events.begin() + item.firstIndex;
    const auto blockEnd = blockBegin + item.count;
    const auto visibleBegin = std::lower_bound(blockBegin, blockEnd, t0, byStart);
    const auto visibleEnd = std::lower_bound(visibleBegin, blockEnd, t1, byStart);
    timeline::densityColumns(stream, matches,
                             static_cast<std::size_t>(visibleBegin - events.begin()),
                             static_cast<std::size_t>(visibleEnd - events.begin()), t0,
                             viewport_.nsPerPixel(), columns, density_);
    const TimelineEvent& e = events[item.firstIndex];
    const bool hide = filterActive_ && filterMode_ == FilterMode::Hide;
    QColor background = filterActive_ ? QColor(150, 150, 150) : foldColors_[e.nameId];
    background.setAlpha(55);
    painter.fillRect(box, background);

    const int bottom = static_cast<int>(std::floor(box.bottom()));
    const double height = box.height();
    // Bars as integer rectangles, neighbours of equal height merged: the raster engine fills
    // those far faster than a polygon of the same outline.
    auto bars = [&](const QColor& color, auto shareOf) {
        densityRects_.clear();
        int runStart = 0;
        int runHeight = 0;
        for (int c = 0; c <= columns; ++c) {
            const int h = c < columns
                              ? static_cast<int>(std::lround(
                                    shareOf(density_[static_cast<std::size_t>(c)]) * height))
                              : -1;
            if (h == runHeight)
                continue;
            if (runHeight > 0)
                densityRects_.push_back(
                    QRect(left + runStart, bottom - runHeight, c - runStart, runHeight));
            runStart = c;
            runHeight = h;
        }
        painter.setBrush(color);
        painter.drawRects(densityRects_.data(), static_cast<int>(densityRects_.size()));
    };
    painter.setPen(Qt::NoPen);
    if (!hide)
        bars(filterActive_ ? dimColors_[e.nameId] : foldColors_[e.nameId],
             [](const timeline::DensityColumn& d) { return static_cast<double>(d.busy); });
    std::uint64_t matched = 0;
    if (matches) {
        matched = (*matches)[item.firstIndex + item.count] - (*matches)[item.firstIndex];
        bars(palette().color(QPalette::Highlight), [](const timeline::DensityColumn& d) {
            return d.count ? static_cast<double>(d.busy) * d.matches / d.count : 0.0;
        });
    }
    painter.setBrush(Qt::NoBrush);
    if (box.width() > 30.0) {
        const std::size_t first = item.firstIndex;
        const std::size_t last = first + item.count;
        const double span = static_cast<double>(item.endNs - item.startNs);
        const double busy =
            span > 0
                ? static_cast<double>(stream.busyPrefix[last] - stream.busyPrefix[first]) / span
                : 0.0;
        QString label = QStringLiteral("%1× · %2% busy")
                            .arg(QLocale().toString(static_cast<qulonglong>(item.count)))
                            .arg(std::lround(std::min(busy, 1.0) * 100.0));
        if (matches)
            label += tr(" · %1 match").arg(QLocale().toString(static_cast<qulonglong>(matched)));
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(box.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
    }
    return true;
}

void TimelineView::outline(QPainter& painter, const timeline::TimelineHit& hit, const QColor& color,
                           double width) {
    const timeline::LaneRow& row = layout_.rows()[hit.row];
    const double top = layout_.screenTop(row);
    const double x0 =
        std::max(viewport_.xOf(static_cast<double>(hit.startNs)), viewport_.plotLeft() - 4.0);
    const double x1 = std::min(viewport_.xOf(static_cast<double>(hit.endNs)),
                               viewport_.plotLeft() + viewport_.plotWidth() + 4.0);
    painter.setPen(QPen(color, width));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(x0, top + 0.5, std::max(x1 - x0, 1.0), row.height - 1.0));
}

void TimelineView::paintLabels(QPainter& painter) {
    const QPalette& pal = palette();
    const QRectF column(0, timeline::TimelineLaneLayout::kRulerHeight, kLabelWidth,
                        height() - timeline::TimelineLaneLayout::kRulerHeight);
    painter.fillRect(column, pal.window());
    painter.save();
    painter.setClipRect(column);
    const QFontMetrics metrics = fontMetrics();
    for (const timeline::LaneRow& row : layout_.rows()) {
        const double top = layout_.screenTop(row);
        if (!row.firstOfLane || top + row.height < column.top() || top > height())
            continue;
        const auto lane = static_cast<std::size_t>(row.lane);
        const std::string& label = row.kind == timeline::LaneRow::Kind::Range
                                       ? timeline_->ranges[lane].label
                                       : timeline_->streams[lane].label;
        painter.setPen(pal.color(QPalette::WindowText));
        painter.drawText(QRectF(6, top, kLabelWidth - 10, row.height),
                         Qt::AlignVCenter | Qt::AlignLeft,
                         metrics.elidedText(QString::fromStdString(label), Qt::ElideRight,
                                            static_cast<int>(kLabelWidth - 10)));
        painter.setPen(pal.color(QPalette::Mid));
        painter.drawLine(QPointF(0, top - 3), QPointF(width(), top - 3));
    }
    painter.restore();
    painter.setPen(pal.color(QPalette::Mid));
    painter.drawLine(QPointF(kLabelWidth, 0), QPointF(kLabelWidth, height()));
}

void TimelineView::paintRuler(QPainter& painter) {
    const QPalette& pal = palette();
    const double rulerHeight = timeline::TimelineLaneLayout::kRulerHeight;
    painter.fillRect(QRectF(0, 0, width(), rulerHeight), pal.window());
    painter.setPen(pal.color(QPalette::WindowText));
    painter.drawText(QRectF(6, 0, kLabelWidth - 10, rulerHeight), Qt::AlignVCenter | Qt::AlignLeft,
                     formatDuration(viewport_.spanNs()));
    // A labelled tick about every 110 px; four unlabelled ones between.
    const double step = niceStep(viewport_.nsPerPixel() * 110.0);
    const double minor = step / 5.0;
    const double right = viewport_.plotLeft() + viewport_.plotWidth();
    painter.save();
    painter.setClipRect(QRectF(kLabelWidth, 0, width() - kLabelWidth, height()));
    // Integer tick numbers: accumulating a float step would drift off the labels.
    const auto firstTick = static_cast<std::int64_t>(std::floor(viewport_.t0() / minor));
    const auto lastTick = static_cast<std::int64_t>(std::ceil(viewport_.t1() / minor));
    for (std::int64_t tick = firstTick; tick <= lastTick; ++tick) {
        const double t = static_cast<double>(tick) * minor;
        const double x = viewport_.xOf(t);
        if (x < viewport_.plotLeft() || x > right)
            continue;
        const bool major = tick % 5 == 0;
        painter.setPen(pal.color(QPalette::Mid));
        painter.drawLine(QPointF(x, rulerHeight - (major ? 10 : 4)), QPointF(x, rulerHeight));
        if (!major)
            continue;
        painter.setPen(pal.color(QPalette::WindowText));
        painter.drawText(QPointF(x + 3, rulerHeight - 12), formatTimeAtStep(t, step));
        QColor grid = pal.color(QPalette::Mid);
        grid.setAlpha(60);
        painter.setPen(grid);
        painter.drawLine(QPointF(x, rulerHeight), QPointF(x, height()));
    }
    painter.restore();
    painter.setPen(pal.color(QPalette::Mid));
    painter.drawLine(QPointF(0, rulerHeight), QPointF(width(), rulerHeight));
}

void TimelineView::paintOverlays(QPainter& painter) {
    const double top = timeline::TimelineLaneLayout::kRulerHeight;
    painter.save();
    painter.setClipRect(QRectF(kLabelWidth, 0, width() - kLabelWidth, height()));
    const auto band = [&](double a, double b, const QColor& fill, const QString& label) {
        const double x0 = viewport_.xOf(std::min(a, b));
        const double x1 = viewport_.xOf(std::max(a, b));
        painter.fillRect(QRectF(x0, top, std::max(x1 - x0, 1.0), height() - top), fill);
        QColor edge = fill;
        edge.setAlpha(220);
        painter.setPen(edge);
        painter.drawLine(QPointF(x0, top), QPointF(x0, height()));
        painter.drawLine(QPointF(x1, top), QPointF(x1, height()));
        if (!label.isEmpty()) {
            const QRectF box(x0 + 4, top + 2, fontMetrics().horizontalAdvance(label) + 8,
                             fontMetrics().height() + 4);
            painter.fillRect(box, palette().toolTipBase());
            painter.setPen(palette().color(QPalette::ToolTipText));
            painter.drawText(box, Qt::AlignCenter, label);
        }
    };
    if (measureA_ && measureB_)
        band(*measureA_, *measureB_, QColor(255, 190, 0, 50),
             QStringLiteral("Δt = %1").arg(formatDuration(std::abs(*measureB_ - *measureA_))));
    else if (measureA_)
        band(*measureA_, *measureA_, QColor(255, 190, 0, 50), tr("click the second point"));
    if (drag_ == Drag::RangeSelect)
        band(rangeSelectA_, rangeSelectB_, QColor(60, 140, 255, 50),
             tr("zoom to %1").arg(formatDuration(std::abs(rangeSelectB_ - rangeSelectA_))));
    painter.restore();

    // Lost records change what the timeline means, so they sit on the plot, not in a menu.
    const std::uint64_t dropped = timeline_->dropped.total();
    if (dropped > 0) {
        const QString text = tr("%n record(s) dropped", nullptr,
                                static_cast<int>(std::min<std::uint64_t>(dropped, INT32_MAX)));
        const QRectF box(width() - fontMetrics().horizontalAdvance(text) - 18,
                         height() - fontMetrics().height() - 10,
                         fontMetrics().horizontalAdvance(text) + 12, fontMetrics().height() + 6);
        painter.fillRect(box, QColor(180, 30, 30, 230));
        painter.setPen(Qt::white);
        painter.drawText(box, Qt::AlignCenter, text);
    }
}

} // namespace kwb::ui
