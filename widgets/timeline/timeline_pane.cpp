#include "widgets/timeline/timeline_pane.h"

#include "widgets/common/empty_state_pane.h"
#include "widgets/models/kernel_statistics_model.h"
#include "widgets/models/timeline_event_details.h"
#include "widgets/models/timeline_format.h"
#include "widgets/timeline/duration_histogram_view.h"
#include "widgets/timeline/timeline_view.h"
#include "widgets/timeline/trace_loading_pane.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace kwb::ui {

namespace {

QToolButton* toolButton(const QString& text, const QString& tip, QWidget* parent) {
    auto* button = new QToolButton(parent);
    button->setText(text);
    button->setToolTip(tip);
    button->setAutoRaise(true);
    return button;
}

QLabel* viewTitle(const QString& text, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    return label;
}

} // namespace

QString TimelinePane::keyHelp() {
    return tr("Wheel: zoom at the cursor · Shift+wheel: scroll lanes\n"
              "Drag: pan · Right-drag: zoom to a range\n"
              "W / S: zoom in / out · A / D: pan left / right\n"
              "Backspace: previous zoom · Home: whole run · Z: zoom to the selection\n"
              "Shift+drag, or M then two clicks: measure Δt\n"
              "Click: select a kernel · Click a hatched block: open it · Esc: clear");
}

QString TimelinePane::emptyExplanation() {
    return tr("Evaluate with a GPU to record one, or open a trace: File > Open Trace… "
              "(kwb-cupti records or Chrome/Perfetto JSON), or drop the file on the window.");
}

TimelinePane::TimelinePane(QWidget* parent)
    : QWidget(parent), stack_(new QStackedWidget(this)),
      empty_(new EmptyStatePane(tr("No timeline yet"), emptyExplanation(), this)),
      loading_(new TraceLoadingPane(this)), view_(new TimelineView(this)),
      comparisonView_(new TimelineView(this)), statistics_(new KernelStatisticsModel(this)),
      statisticsProxy_(new QSortFilterProxyModel(this)) {
    auto* content = new QWidget(this);

    search_ = new QLineEdit(content);
    search_->setPlaceholderText(tr("Filter kernels by name (regular expression)"));
    search_->setClearButtonEnabled(true);
    hideOthers_ = new QCheckBox(tr("Hide others"), content);
    auto* back = toolButton(tr("Back"), tr("Previous zoom (Backspace)"), content);
    auto* reset = toolButton(tr("Reset"), tr("Show the whole run (Home)"), content);
    auto* fit = toolButton(tr("Fit"), tr("Zoom to the selected kernel (Z)"), content);
    auto* measure = toolButton(tr("Measure"), tr("Click two points, or shift+drag (M)"), content);
    auto* keys = toolButton(tr("Keys"), keyHelp(), content);
    status_ = new QLabel(content);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* toolbar = new QHBoxLayout;
    toolbar->addWidget(search_, 2);
    toolbar->addWidget(hideOthers_);
    toolbar->addWidget(back);
    toolbar->addWidget(reset);
    toolbar->addWidget(fit);
    toolbar->addWidget(measure);
    toolbar->addWidget(keys);
    toolbar->addWidget(status_, 3);

    currentTitle_ = viewTitle(tr("Current"), content);
    comparisonTitle_ = viewTitle(tr("Reference"), content);
    auto* views = new QWidget(content);
    auto* viewsLayout = new QVBoxLayout(views);
    viewsLayout->setContentsMargins(0, 0, 0, 0);
    viewsLayout->setSpacing(2);
    viewsLayout->addWidget(currentTitle_);
    viewsLayout->addWidget(view_, 1);
    viewsLayout->addWidget(comparisonTitle_);
    viewsLayout->addWidget(comparisonView_, 1);
    currentTitle_->hide();
    comparisonTitle_->hide();
    comparisonView_->hide();

    statisticsProxy_->setSourceModel(statistics_);
    statisticsProxy_->setSortRole(KernelStatisticsModel::SortRole);
    statisticsProxy_->setFilterKeyColumn(KernelStatisticsModel::Name);
    statisticsProxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    table_ = new QTableView(content);
    table_->setModel(statisticsProxy_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(KernelStatisticsModel::Total, Qt::DescendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    // Numbers stay readable; the name column takes what is left and can be dragged wider.
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(KernelStatisticsModel::Name,
                                                     QHeaderView::Interactive);
    table_->horizontalHeader()->resizeSection(KernelStatisticsModel::Name, 260);
    table_->setWordWrap(false);
    table_->setTextElideMode(Qt::ElideRight);
    details_ = new QPlainTextEdit(content);
    details_->setReadOnly(true);
    details_->setPlaceholderText(tr("Click a kernel to see its launch and resources."));

    // Find a kernel's instances by duration: the selected name's histogram, and stepping
    // through the instances of the bars chosen in it.
    auto* durations = new QWidget(content);
    histogram_ = new DurationHistogramView(durations);
    previousInstance_ =
        toolButton(tr("◀"), tr("Previous instance of the chosen durations"), durations);
    nextInstance_ = toolButton(tr("▶"), tr("Next instance of the chosen durations"), durations);
    instanceLabel_ = new QLabel(durations);
    instanceLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* stepping = new QHBoxLayout;
    stepping->setContentsMargins(0, 0, 0, 0);
    stepping->addWidget(previousInstance_);
    stepping->addWidget(nextInstance_);
    stepping->addWidget(instanceLabel_, 1);
    // Neither tab may make the dock taller: the window must fit a 768-pixel screen.
    durations->setMinimumHeight(1);
    details_->setMinimumHeight(1);
    auto* durationsLayout = new QVBoxLayout(durations);
    durationsLayout->setContentsMargins(0, 0, 0, 0);
    durationsLayout->setSpacing(2);
    durationsLayout->addWidget(histogram_, 1);
    durationsLayout->addLayout(stepping);

    // Details and durations share one place: stacked, they made the dock taller than a
    // 768-pixel screen allows.
    sideTabs_ = new QTabWidget(content);
    sideTabs_->setDocumentMode(true);
    sideTabs_->addTab(details_, tr("Details"));
    sideTabs_->addTab(durations, tr("Durations"));
    auto* side = new QSplitter(Qt::Vertical, content);
    side->addWidget(table_);
    side->addWidget(sideTabs_);
    auto* split = new QSplitter(Qt::Horizontal, content);
    split->addWidget(views);
    split->addWidget(side);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({3000, 1000}); // proportions: the timeline gets three quarters
    side->setSizes({550, 450});

    auto* contentLayout = new QVBoxLayout(content);
    contentLayout->setContentsMargins(2, 2, 2, 2);
    contentLayout->addLayout(toolbar);
    contentLayout->addWidget(split, 1);

    content_ = content;
    stack_->addWidget(empty_);
    stack_->addWidget(content);
    stack_->addWidget(loading_);
    connect(loading_, &TraceLoadingPane::cancelRequested, this, &TimelinePane::loadCancelRequested);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(stack_);

    connect(search_, &QLineEdit::textChanged, this, &TimelinePane::applySearch);
    connect(hideOthers_, &QCheckBox::toggled, this, &TimelinePane::applySearch);
    connect(back, &QToolButton::clicked, view_, &TimelineView::zoomBack);
    connect(reset, &QToolButton::clicked, view_, &TimelineView::resetZoom);
    connect(fit, &QToolButton::clicked, view_, &TimelineView::zoomToSelection);
    connect(measure, &QToolButton::clicked, view_, &TimelineView::startMeasure);
    // One time axis for both runs: whichever view navigates, the other follows.
    for (auto [from, to] : {std::pair{view_, comparisonView_}, std::pair{comparisonView_, view_}}) {
        TimelineView* target = to;
        connect(from, &TimelineView::viewRangeChanged, this, [this, target](double t0, double t1) {
            target->setViewRange(t0, t1);
            emit timeRangeChanged(static_cast<qint64>(t0), static_cast<qint64>(t1));
        });
        connect(from, &TimelineView::measurementChanged, this, [this](double a, double b) {
            measureText_ = tr("Δt = %1").arg(formatDuration(b - a));
            updateStatus();
        });
    }
    connect(view_, &TimelineView::eventSelected, this, &TimelinePane::showSelection);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showDurationsOf(current); });
    connect(histogram_, &DurationHistogramView::binsSelected, this, [this](int first, int last) {
        stepping_ = histogram_->histogram().instancesIn(first, last);
        steppingAt_ = stepping_.empty() ? -1 : 0;
        showSteppedInstance();
    });
    connect(previousInstance_, &QToolButton::clicked, this, [this] { stepInstance(-1); });
    connect(nextInstance_, &QToolButton::clicked, this, [this] { stepInstance(+1); });
    updateStepping();
    connect(table_, &QTableView::activated, this, [this](const QModelIndex& index) {
        selectKernelName(index.siblingAtColumn(KernelStatisticsModel::Name).data().toString());
    });
    updateStatus();
}

bool TimelinePane::showsEmptyState() const {
    return stack_->currentWidget() == empty_;
}

bool TimelinePane::showsLoading() const {
    return stack_->currentWidget() == loading_;
}

void TimelinePane::showLoading(const QString& fileName) {
    loading_->start(fileName);
    stack_->setCurrentWidget(loading_);
}

void TimelinePane::setLoadingProgress(qint64 done, qint64 total) {
    loading_->setProgress(done, total);
}

void TimelinePane::showLoadFailure(const QString& title, const QString& why) {
    // The previous timeline is gone from view; the failure says why instead.
    view_->setTimeline(nullptr);
    statistics_->setTimeline(nullptr);
    details_->clear();
    source_.clear();
    empty_->setText(title, why);
    stack_->setCurrentWidget(empty_);
    updateStatus();
}

void TimelinePane::endLoading() {
    if (showsLoading())
        stack_->setCurrentWidget(view_->timeline() ? content_ : empty_);
}

void TimelinePane::setSource(const QString& source) {
    source_ = source;
    updateStatus();
}

bool TimelinePane::comparing() const {
    return !comparisonView_->isHidden();
}

void TimelinePane::setTimeline(kwb::timeline::TimelineSnapshot timeline) {
    const bool has = static_cast<bool>(timeline);
    view_->setTimeline(timeline);
    statistics_->setTimeline(timeline);
    details_->clear();
    measureText_.clear();
    source_.clear(); // the caller names a file it opened after this
    histogram_->clear();
    histogramNameId_.reset();
    stepping_.clear();
    steppingAt_ = -1;
    updateStepping();
    if (!has)
        empty_->setText(tr("No timeline yet"), emptyExplanation());
    stack_->setCurrentWidget(has ? content_ : empty_);
    shareExtent();
    applySearch();
    updateStatus();
}

void TimelinePane::showDurationsOf(const QModelIndex& proxyIndex) {
    const auto& timeline = view_->timeline();
    if (!timeline || !proxyIndex.isValid()) {
        histogram_->clear();
        histogramNameId_.reset();
        stepping_.clear();
        steppingAt_ = -1;
        updateStepping();
        return;
    }
    const auto nameId =
        static_cast<std::uint32_t>(proxyIndex.siblingAtColumn(KernelStatisticsModel::Name)
                                       .data(KernelStatisticsModel::NameIdRole)
                                       .toUInt());
    // Selecting an instance selects its row again: the histogram and the stepping stay.
    if (histogramNameId_ == nameId)
        return;
    histogramNameId_ = nameId;
    histogram_->setHistogram(DurationHistogram(*timeline, nameId, kHistogramBins),
                             QString::fromStdString(timeline->displayName(nameId)));
    stepping_.clear();
    steppingAt_ = -1;
    updateStepping();
}

void TimelinePane::stepInstance(int delta) {
    if (stepping_.empty())
        return;
    const int n = static_cast<int>(stepping_.size());
    steppingAt_ = ((steppingAt_ + delta) % n + n) % n;
    showSteppedInstance();
}

void TimelinePane::showSteppedInstance() {
    updateStepping();
    if (steppingAt_ < 0)
        return;
    const KernelInstance& instance = stepping_[static_cast<std::size_t>(steppingAt_)];
    view_->selectStreamEvent(instance.lane, instance.index);
    view_->zoomToSelection();
}

void TimelinePane::updateStepping() {
    previousInstance_->setEnabled(stepping_.size() > 1);
    nextInstance_->setEnabled(stepping_.size() > 1);
    if (steppingAt_ < 0) {
        instanceLabel_->setText(histogram_->histogram().empty()
                                    ? QString()
                                    : tr("Click bars to step through their instances"));
        return;
    }
    const KernelInstance& instance = stepping_[static_cast<std::size_t>(steppingAt_)];
    instanceLabel_->setText(tr("%1 of %2 · %3")
                                .arg(steppingAt_ + 1)
                                .arg(stepping_.size())
                                .arg(formatDuration(static_cast<double>(instance.durationNs))));
}

void TimelinePane::setComparison(kwb::timeline::TimelineSnapshot reference) {
    const bool has = static_cast<bool>(reference);
    comparisonView_->setTimeline(std::move(reference));
    comparisonView_->setVisible(has);
    currentTitle_->setVisible(has);
    comparisonTitle_->setVisible(has);
    shareExtent();
    applySearch();
    updateStatus();
}

void TimelinePane::shareExtent() {
    double extent = 0.0;
    for (TimelineView* v : {view_, comparisonView_})
        if (v->timeline())
            extent = std::max(extent, static_cast<double>(v->timeline()->endNs));
    for (TimelineView* v : {view_, comparisonView_})
        if (v->timeline())
            v->setExtent(extent);
}

void TimelinePane::setSearchPattern(const QString& pattern) {
    search_->setText(pattern);
}

void TimelinePane::applySearch() {
    const QString pattern = search_->text();
    const auto mode =
        hideOthers_->isChecked() ? TimelineView::FilterMode::Hide : TimelineView::FilterMode::Dim;
    const bool valid = view_->setNameFilter(pattern, mode);
    comparisonView_->setNameFilter(pattern, mode);
    search_->setStyleSheet(valid ? QString() : QStringLiteral("color: #c0392b;"));
    search_->setToolTip(valid ? QString() : tr("Not a valid regular expression"));
    if (valid)
        statisticsProxy_->setFilterRegularExpression(
            QRegularExpression(pattern, QRegularExpression::CaseInsensitiveOption));
}

void TimelinePane::selectKernel(int streamLane, quint32 eventIndex) {
    view_->selectStreamEvent(streamLane, eventIndex);
}

void TimelinePane::selectKernelName(const QString& name) {
    search_->setText(QStringLiteral("^%1$").arg(QRegularExpression::escape(name)));
}

void TimelinePane::selectStatisticsRow(const QString& name) {
    for (int row = 0; row < statisticsProxy_->rowCount(); ++row) {
        const QModelIndex index = statisticsProxy_->index(row, KernelStatisticsModel::Name);
        if (index.data().toString() == name) {
            table_->selectRow(row);
            table_->scrollTo(index);
            return;
        }
    }
    table_->clearSelection();
}

void TimelinePane::showTimeRange(qint64 startNs, qint64 endNs) {
    view_->zoomToRange(static_cast<double>(startNs), static_cast<double>(endNs));
}

void TimelinePane::showSelection(const timeline::TimelineHit& hit) {
    const auto& timeline = view_->timeline();
    if (!timeline)
        return;
    details_->setPlainText(describeHit(*timeline, hit));
    if (hit.kind != timeline::LaneRow::Kind::Stream)
        return;
    const auto& event =
        timeline->streams[static_cast<std::size_t>(hit.lane)].events[hit.eventIndex];
    emit kernelSelected(QString::fromStdString(timeline->displayName(event.nameId)), hit.lane,
                        hit.eventIndex, event.startNs, event.endNs);
}

QString TimelinePane::statusText() const {
    return status_->text();
}

QString TimelinePane::instanceText() const {
    return instanceLabel_->text();
}

QString TimelinePane::detailsText() const {
    return details_->toPlainText();
}

void TimelinePane::updateStatus() {
    const auto& timeline = view_->timeline();
    if (!timeline) {
        status_->clear();
        return;
    }
    const auto& d = timeline->dropped;
    QStringList parts;
    if (!source_.isEmpty())
        parts << source_;
    if (!timeline->deviceName.empty())
        parts << QString::fromStdString(timeline->deviceName);
    parts
        << tr("%1 kernels").arg(QLocale().toString(static_cast<qulonglong>(timeline->kernelCount)));
    parts << tr("span %1").arg(formatDuration(static_cast<double>(timeline->endNs)));
    if (d.total() == 0)
        parts << tr("no dropped records");
    else
        parts << tr("DROPPED %1 records (CUPTI %2, malformed %3, buffer overflow %4)")
                     .arg(d.total())
                     .arg(d.cuptiDropped)
                     .arg(d.malformed)
                     .arg(d.bufferOverflow);
    if (comparing() && comparisonView_->timeline() &&
        comparisonView_->timeline()->dropped.total() > 0)
        parts << tr("reference dropped %1").arg(comparisonView_->timeline()->dropped.total());
    if (!measureText_.isEmpty())
        parts << measureText_;
    status_->setText(parts.join(QStringLiteral(" · ")));
    status_->setStyleSheet(d.total() > 0 ? QStringLiteral("color: #c0392b;") : QString());
}

} // namespace kwb::ui
