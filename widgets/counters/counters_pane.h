#pragma once

#include "engine/counters/ncu_files.h"
#include "engine/evaluation/ncu_collection.h"

#include <QStringList>
#include <QWidget>
#include <memory>

class QLabel;
class QPushButton;
class QStackedWidget;
class QTableView;
class QTreeWidget;

namespace kwb::ui {

class CountersKernelModel;
class EngineBridge;
class RooflineChart;

// Hardware counters from Nsight Compute (issue 19, item 5): the kernels of an opened report in
// a table, the selected kernel's sections, metrics and ncu's advice, and every kernel on the
// DRAM roofline. A second report opened with "Compare with…" is the baseline: each kernel's
// duration against it in the table, its metrics beside the current ones, its roofline place
// joined to the current one. Files are read on the engine thread (EngineBridge).
class CountersPane : public QWidget {
    Q_OBJECT
public:
    explicit CountersPane(EngineBridge* bridge, QWidget* parent = nullptr);

    // Opens ncu CSV files (a details page and, for the roofline, its raw page) as the current
    // report, or as the baseline to compare with.
    void openReport(const QStringList& paths);
    void openBaseline(const QStringList& paths);
    void clearBaseline();

    // Collecting from the open workspace (Collect… opens CollectCountersDialog): possible only
    // with a GPU; `why` says what is missing when not. The kernel hint prefills the dialog's
    // filter (the timeline's selected kernel).
    void setCollectPossible(bool possible, const QString& why);
    void setKernelHint(const QString& kernelName);
    QString kernelHint() const { return kernelHint_; }
    QPushButton* collectButton() const { return collectButton_; }
    // "Collecting…" while an evaluation under ncu runs, or the reason it gave none.
    void showCollecting(const QString& text);

    CountersKernelModel* kernelModel() const { return model_; }
    RooflineChart* roofline() const { return chart_; }
    QTreeWidget* details() const { return details_; }
    QTableView* kernelTable() const { return table_; }
    QString statusText() const;

signals:
    // After each load, with the error when it failed (for the log).
    void reportOpened(const QString& description, const QString& error);
    void collectRequested(const kwb::CounterCollection& collection);

private:
    void onLoaded(const QString& purpose,
                  const std::shared_ptr<const kwb::counters::LoadedCounters>& loaded);
    void chooseFiles(const QString& purpose);
    void showKernel(int row);
    void refreshChart();
    void updateStatus();

    EngineBridge* bridge_;
    CountersKernelModel* model_;
    QTableView* table_;
    RooflineChart* chart_;
    QTreeWidget* details_;
    QLabel* status_;
    QLabel* hint_;
    QStackedWidget* pages_ = nullptr; // the hint, or the report
    QPushButton* compareButton_;
    QPushButton* clearButton_;
    QPushButton* collectButton_;
    QString kernelHint_;
    std::shared_ptr<const kwb::counters::LoadedCounters> current_, baseline_;
    QString lastError_;
};

} // namespace kwb::ui
