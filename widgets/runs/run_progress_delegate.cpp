#include "widgets/runs/run_progress_delegate.h"

#include "widgets/models/run_list_model.h"

#include <QApplication>
#include <QStyleOptionProgressBar>

namespace kwb::ui {

void RunProgressDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                                const QModelIndex& index) const {
    const int progress = index.data(RunListModel::ProgressRole).toInt();
    if (progress < 0) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    QStyleOptionProgressBar bar;
    bar.rect = option.rect.adjusted(2, 3, -2, -3);
    bar.minimum = 0;
    bar.maximum = 100;
    bar.progress = progress;
    bar.text = tr("%1%").arg(progress);
    bar.textVisible = true;
    bar.state = option.state | QStyle::State_Horizontal;
    const QStyle* style = option.widget ? option.widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ProgressBar, &bar, painter, option.widget);
}

} // namespace kwb::ui
