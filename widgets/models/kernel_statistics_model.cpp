#include "widgets/models/kernel_statistics_model.h"

#include "widgets/models/timeline_format.h"

namespace kwb::ui {

KernelStatisticsModel::KernelStatisticsModel(QObject* parent) : QAbstractTableModel(parent) {}

void KernelStatisticsModel::setTimeline(kwb::timeline::TimelineSnapshot timeline) {
    beginResetModel();
    timeline_ = std::move(timeline);
    totalKernelNs_ = 0.0;
    if (timeline_)
        for (const auto& s : timeline_->kernelStatistics)
            totalKernelNs_ += static_cast<double>(s.totalNs);
    endResetModel();
}

int KernelStatisticsModel::rowOfName(std::uint32_t nameId) const {
    if (!timeline_)
        return -1;
    const auto& stats = timeline_->kernelStatistics;
    for (std::size_t row = 0; row < stats.size(); ++row)
        if (stats[row].nameId == nameId)
            return static_cast<int>(row);
    return -1;
}

int KernelStatisticsModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !timeline_)
        return 0;
    return static_cast<int>(timeline_->kernelStatistics.size());
}

int KernelStatisticsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelStatisticsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) ||
        !timeline_)
        return {};
    const auto& s = timeline_->kernelStatistics[static_cast<std::size_t>(index.row())];
    const double share =
        totalKernelNs_ > 0 ? 100.0 * static_cast<double>(s.totalNs) / totalKernelNs_ : 0.0;
    const QString name = s.nameId < timeline_->demangledNames.size()
                             ? QString::fromStdString(timeline_->displayName(s.nameId))
                             : QString();
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Name:
            return name;
        case Count:
            return QString::number(s.count);
        case Total:
            return formatDuration(static_cast<double>(s.totalNs));
        case Mean:
            return formatDuration(s.meanNs);
        case Min:
            return formatDuration(static_cast<double>(s.minNs));
        case Max:
            return formatDuration(static_cast<double>(s.maxNs));
        case Share:
            return QStringLiteral("%1%").arg(share, 0, 'f', 1);
        }
        return {};
    case SortRole:
        switch (index.column()) {
        case Name:
            return name;
        case Count:
            return static_cast<qulonglong>(s.count);
        case Total:
            return static_cast<qlonglong>(s.totalNs);
        case Mean:
            return s.meanNs;
        case Min:
            return static_cast<qlonglong>(s.minNs);
        case Max:
            return static_cast<qlonglong>(s.maxNs);
        case Share:
            return share;
        }
        return {};
    case NameIdRole:
        return s.nameId;
    case Qt::ToolTipRole:
        return index.column() == Name ? name : QVariant();
    case Qt::TextAlignmentRole:
        return index.column() == Name ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant KernelStatisticsModel::headerData(int section, Qt::Orientation orientation,
                                           int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Name:
        return tr("Kernel");
    case Count:
        return tr("Count");
    case Total:
        return tr("Total");
    case Mean:
        return tr("Mean");
    case Min:
        return tr("Min");
    case Max:
        return tr("Max");
    case Share:
        return tr("% of total");
    }
    return {};
}

} // namespace kwb::ui
