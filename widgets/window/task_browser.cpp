#include "widgets/window/task_browser.h"

#include "widgets/models/task_list_model.h"

#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QSortFilterProxyModel>
#include <QVBoxLayout>

namespace kwb::ui {

TaskBrowser::TaskBrowser(TaskListModel* model, QWidget* parent)
    : QWidget(parent), model_(model), proxy_(new QSortFilterProxyModel(this)),
      filter_(new QLineEdit(this)), view_(new QListView(this)), status_(new QLabel(this)) {
    proxy_->setSourceModel(model_);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy_->setFilterRole(Qt::ToolTipRole); // title, id, category and description all match
    filter_->setPlaceholderText(tr("Filter tasks (name, category)…"));
    filter_->setClearButtonEnabled(true);
    view_->setModel(proxy_);
    view_->setUniformItemSizes(true);
    view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    status_->setWordWrap(true);
    status_->setForegroundRole(QPalette::PlaceholderText);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(filter_);
    layout->addWidget(view_, 1);
    layout->addWidget(status_);

    connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
    connect(view_, &QListView::activated, this, &TaskBrowser::activateIndex);
    connect(view_, &QListView::clicked, this, &TaskBrowser::activateIndex);
}

void TaskBrowser::activateIndex(const QModelIndex& proxyIndex) {
    if (proxyIndex.isValid())
        emit taskActivated(proxyIndex.data(TaskListModel::PathRole).toString());
}

void TaskBrowser::selectTask(const QString& path) {
    const int row = model_->rowOfPath(path);
    if (row < 0)
        return;
    const QModelIndex index = proxy_->mapFromSource(model_->index(row));
    view_->setCurrentIndex(index);
    view_->scrollTo(index);
}

void TaskBrowser::setStatusText(const QString& text) {
    status_->setText(text);
}

} // namespace kwb::ui
