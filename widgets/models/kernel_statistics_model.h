#pragma once

#include "engine/timeline/kernel_timeline.h"

#include <QAbstractTableModel>

namespace kwb::ui {

// Per-kernel-name statistics of one timeline: name, count, total, mean, min, max and share of
// all kernel time. Rows are replaced wholesale from an immutable snapshot. Display text is
// formatted; SortRole gives the raw number so a QSortFilterProxyModel sorts numerically.
class KernelStatisticsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Count, Total, Mean, Min, Max, Share, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1,
        NameIdRole,
    };

    explicit KernelStatisticsModel(QObject* parent = nullptr);

    void setTimeline(kwb::timeline::TimelineSnapshot timeline);
    // The row of a name id, or -1.
    int rowOfName(std::uint32_t nameId) const;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    kwb::timeline::TimelineSnapshot timeline_;
    double totalKernelNs_ = 0.0;
};

} // namespace kwb::ui
