#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QListView;
class QSortFilterProxyModel;

namespace kwb::ui {

class TaskListModel;

// The list of tasks with a filter box. Activating a task asks the window to open it.
class TaskBrowser : public QWidget {
    Q_OBJECT
public:
    explicit TaskBrowser(TaskListModel* model, QWidget* parent = nullptr);

    void selectTask(const QString& path);
    void setStatusText(const QString& text);

signals:
    void taskActivated(const QString& path);

private:
    void activateIndex(const QModelIndex& proxyIndex);

    TaskListModel* model_;
    QSortFilterProxyModel* proxy_;
    QLineEdit* filter_;
    QListView* view_;
    QLabel* status_;
};

} // namespace kwb::ui
