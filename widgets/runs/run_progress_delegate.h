#pragma once

#include <QStyledItemDelegate>

namespace kwb::ui {

// Draws RunListModel's progress column as a progress bar for running episodes.
class RunProgressDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;
};

} // namespace kwb::ui
