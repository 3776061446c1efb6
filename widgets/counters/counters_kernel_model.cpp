#include "widgets/counters/counters_kernel_model.h"

#include "engine/counters/roofline.h"

namespace kwb::ui {
namespace {

using kwb::counters::KernelCounters;
using kwb::counters::SectionMetric;

QString metricText(const SectionMetric* m) {
    return m ? QString::fromStdString(m->value.display()) : QStringLiteral("–");
}

QString rooflineText(const KernelCounters& k) {
    for (const auto& p : kwb::counters::rooflinePoints(k))
        if (p.flopsPerSecond > 0 || p.precision == "FP32")
            return QStringLiteral("%1 %2 · %3%")
                .arg(QString::fromStdString(p.precision),
                     p.memoryBound() ? QStringLiteral("memory") : QStringLiteral("compute"))
                .arg(qRound(100 * p.shareOfAttainable()));
    return QStringLiteral("no raw page");
}

std::optional<double> durationSeconds(const KernelCounters* k) {
    if (!k)
        return std::nullopt;
    const SectionMetric* m = k->metric("Duration");
    return m ? m->value.baseValue() : std::nullopt;
}

} // namespace

CountersKernelModel::CountersKernelModel(QObject* parent) : QAbstractTableModel(parent) {}

void CountersKernelModel::setReport(std::shared_ptr<const kwb::counters::NcuReport> report) {
    beginResetModel();
    report_ = std::move(report);
    pairWithBaseline();
    endResetModel();
}

void CountersKernelModel::setBaseline(std::shared_ptr<const kwb::counters::NcuReport> baseline) {
    beginResetModel();
    baseline_ = std::move(baseline);
    pairWithBaseline();
    endResetModel();
}

void CountersKernelModel::pairWithBaseline() {
    baselineIds_.assign(report_ ? report_->kernels.size() : 0, -1);
    if (!report_ || !baseline_)
        return;
    // The baseline is "before": compareReports pairs its launches with this report's.
    for (const auto& pair : kwb::counters::compareReports(*baseline_, *report_)) {
        if (pair.afterId < 0 || pair.beforeId < 0)
            continue;
        for (std::size_t row = 0; row < report_->kernels.size(); ++row)
            if (report_->kernels[row].id == pair.afterId)
                baselineIds_[row] = pair.beforeId;
    }
}

const KernelCounters* CountersKernelModel::kernelAt(int row) const {
    if (!report_ || row < 0 || row >= int(report_->kernels.size()))
        return nullptr;
    return &report_->kernels[std::size_t(row)];
}

const KernelCounters* CountersKernelModel::baselineKernelAt(int row) const {
    if (!baseline_ || row < 0 || row >= int(baselineIds_.size()) || baselineIds_[row] < 0)
        return nullptr;
    return baseline_->kernel(baselineIds_[std::size_t(row)]);
}

int CountersKernelModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !report_ ? 0 : int(report_->kernels.size());
}

int CountersKernelModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : Count;
}

QVariant CountersKernelModel::data(const QModelIndex& index, int role) const {
    const KernelCounters* k = index.isValid() ? kernelAt(index.row()) : nullptr;
    if (!k)
        return {};
    if (role == KernelIdRole)
        return k->id;
    if (role == Qt::ToolTipRole && index.column() == Kernel)
        return QString::fromStdString(k->kernelName);
    if (role == Qt::TextAlignmentRole && index.column() != Kernel)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Id:
        return k->id;
    case Kernel:
        return QString::fromStdString(kwb::counters::kernelHeadName(k->kernelName));
    case Duration:
        return metricText(k->metric("Duration"));
    case Compute:
        return metricText(k->metric("Compute (SM) Throughput"));
    case Memory:
        return metricText(k->metric("GPU Speed Of Light Throughput", "Memory Throughput"));
    case Occupancy:
        return metricText(k->metric("Achieved Occupancy"));
    case Roofline:
        return rooflineText(*k);
    case VsBaseline: {
        if (!baseline_)
            return QString();
        const auto now = durationSeconds(k),
                   before = durationSeconds(baselineKernelAt(index.row()));
        if (!now || !before || *now <= 0)
            return QStringLiteral("not in baseline");
        // How much faster than the baseline: above 1 is better, as speed-ups are read.
        return QStringLiteral("%1x").arg(*before / *now, 0, 'f', 2);
    }
    default:
        return {};
    }
}

QVariant CountersKernelModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* names[Count] = {"ID",     "Kernel",    "Duration", "Compute (SM)",
                                       "Memory", "Occupancy", "Roofline", "vs baseline"};
    return section >= 0 && section < Count ? tr(names[section]) : QVariant();
}

} // namespace kwb::ui
