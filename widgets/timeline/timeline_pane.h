#pragma once

#include "engine/timeline/kernel_timeline.h"
#include "widgets/timeline/duration_histogram.h"

#include <QWidget>
#include <optional>
#include <vector>

class QCheckBox;
class QLabel;
class QLineEdit;
class QModelIndex;
class QToolButton;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;
class QTabWidget;

namespace kwb::timeline {
struct TimelineHit;
} // namespace kwb::timeline

namespace kwb::ui {

class DurationHistogramView;
class EmptyStatePane;
class KernelStatisticsModel;
class TimelineView;
class TraceLoadingPane;

// The timeline dock: the view (and a second one in compare mode, sharing its time axis), a
// regex search box, the per-name statistics table, the details of the selected kernel and a
// status line with the dropped-record counts. Shows an empty state until a timeline arrives.
class TimelinePane : public QWidget {
    Q_OBJECT
public:
    // The timeline's mouse and key navigation, for the Keys button and the help page.
    static QString keyHelp();

    explicit TimelinePane(QWidget* parent = nullptr);

    void setTimeline(kwb::timeline::TimelineSnapshot timeline);
    // A reference run drawn under the current one on the same time axis; null ends compare mode.
    void setComparison(kwb::timeline::TimelineSnapshot reference);

    // A trace file loading on the engine thread: progress and Cancel replace the pane until
    // setTimeline(), showLoadFailure() or endLoading() (a cancelled load: back to what was
    // shown). `source` names what the timeline came from in the status line.
    void showLoading(const QString& fileName);
    void setLoadingProgress(qint64 done, qint64 total);
    void showLoadFailure(const QString& title, const QString& why);
    void endLoading();
    void setSource(const QString& source);

    bool showsEmptyState() const;
    bool showsLoading() const;
    TraceLoadingPane* loadingPane() const { return loading_; }
    EmptyStatePane* emptyState() const { return empty_; }
    bool comparing() const;
    TimelineView* view() const { return view_; }
    TimelineView* comparisonView() const { return comparisonView_; }
    KernelStatisticsModel* statisticsModel() const { return statistics_; }
    QSortFilterProxyModel* statisticsProxy() const { return statisticsProxy_; }
    QTableView* statisticsTable() const { return table_; }
    QLineEdit* searchBox() const { return search_; }
    DurationHistogramView* durationHistogram() const { return histogram_; }
    QString instanceText() const;
    QString statusText() const;
    QString detailsText() const;

public slots:
    void selectKernel(int streamLane, quint32 eventIndex);
    // Filters the timeline to exactly this kernel name (others dimmed).
    void selectKernelName(const QString& name);
    void showTimeRange(qint64 startNs, qint64 endNs);
    // Selects (without filtering) the statistics row of this kernel name: linked selection.
    void selectStatisticsRow(const QString& name);
    void setSearchPattern(const QString& pattern);

signals:
    void kernelSelected(const QString& name, int streamLane, quint32 eventIndex, qint64 startNs,
                        qint64 endNs);
    void timeRangeChanged(qint64 startNs, qint64 endNs);
    void loadCancelRequested();

public slots:
    // Steps through the instances of the bars chosen in the duration histogram (wraps around).
    void stepInstance(int delta);

private:
    static constexpr int kHistogramBins = 48;
    static QString emptyExplanation();
    void showDurationsOf(const QModelIndex& proxyIndex);
    void showSteppedInstance();
    void updateStepping();
    void applySearch();
    void showSelection(const timeline::TimelineHit& hit);
    void updateStatus();
    void shareExtent();

    QStackedWidget* stack_ = nullptr;
    EmptyStatePane* empty_ = nullptr;
    TraceLoadingPane* loading_ = nullptr;
    QWidget* content_ = nullptr;
    QString source_;
    TimelineView* view_ = nullptr;
    TimelineView* comparisonView_ = nullptr;
    QLabel* currentTitle_ = nullptr;
    QLabel* comparisonTitle_ = nullptr;
    QLineEdit* search_ = nullptr;
    QCheckBox* hideOthers_ = nullptr;
    QLabel* status_ = nullptr;
    QPlainTextEdit* details_ = nullptr;
    QTableView* table_ = nullptr;
    KernelStatisticsModel* statistics_ = nullptr;
    QSortFilterProxyModel* statisticsProxy_ = nullptr;
    QString measureText_;
    DurationHistogramView* histogram_ = nullptr;
    QTabWidget* sideTabs_ = nullptr;
    QToolButton* previousInstance_ = nullptr;
    QToolButton* nextInstance_ = nullptr;
    QLabel* instanceLabel_ = nullptr;
    std::optional<std::uint32_t> histogramNameId_;
    std::vector<KernelInstance> stepping_;
    int steppingAt_ = -1;
};

} // namespace kwb::ui
