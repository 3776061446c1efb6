#pragma once

#include "engine/counters/ncu_comparison.h"
#include "engine/counters/ncu_report.h"

#include <QAbstractTableModel>
#include <memory>
#include <optional>
#include <vector>

namespace kwb::ui {

// The kernels of one Nsight Compute report, a row per profiled launch: the few counters that
// say where a kernel stands (duration, compute and memory throughput, occupancy, its roofline
// place) and, once a baseline report is set, its duration against the same kernel there.
class CountersKernelModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Kernel, Duration, Compute, Memory, Occupancy, Roofline, VsBaseline, Count };
    static constexpr int KernelIdRole = Qt::UserRole + 1;

    explicit CountersKernelModel(QObject* parent = nullptr);

    void setReport(std::shared_ptr<const kwb::counters::NcuReport> report);
    void setBaseline(std::shared_ptr<const kwb::counters::NcuReport> baseline);
    const kwb::counters::NcuReport* report() const { return report_.get(); }
    const kwb::counters::NcuReport* baseline() const { return baseline_.get(); }
    // The kernel shown in a row, and the same kernel in the baseline (null when none).
    const kwb::counters::KernelCounters* kernelAt(int row) const;
    const kwb::counters::KernelCounters* baselineKernelAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    void pairWithBaseline();

    std::shared_ptr<const kwb::counters::NcuReport> report_;
    std::shared_ptr<const kwb::counters::NcuReport> baseline_;
    std::vector<int> baselineIds_; // per row: the baseline's launch of the same kernel, or -1
};

} // namespace kwb::ui
