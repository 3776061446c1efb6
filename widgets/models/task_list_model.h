#pragma once

#include "engine/workspace/task_catalog.h"

#include <QAbstractListModel>
#include <vector>

namespace kwb::ui {

// The tasks of one folder, for the task browser. Rows are replaced wholesale from an immutable
// engine snapshot; the model never edits a task.
class TaskListModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role {
        PathRole = Qt::UserRole + 1,
        IdRole,
        CategoryRole,
        DescriptionRole,
        HasSolutionRole,
    };

    explicit TaskListModel(QObject* parent = nullptr);

    void setTasks(std::vector<kwb::TaskInfo> tasks);
    const kwb::TaskInfo* taskAt(int row) const;
    int rowOfPath(const QString& path) const;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    std::vector<kwb::TaskInfo> tasks_;
};

} // namespace kwb::ui
