#include "widgets/models/task_list_model.h"

namespace kwb::ui {

TaskListModel::TaskListModel(QObject* parent) : QAbstractListModel(parent) {}

void TaskListModel::setTasks(std::vector<kwb::TaskInfo> tasks) {
    beginResetModel();
    tasks_ = std::move(tasks);
    endResetModel();
}

const kwb::TaskInfo* TaskListModel::taskAt(int row) const {
    return row >= 0 && row < static_cast<int>(tasks_.size()) ? &tasks_[static_cast<size_t>(row)]
                                                             : nullptr;
}

int TaskListModel::rowOfPath(const QString& path) const {
    for (size_t i = 0; i < tasks_.size(); ++i)
        if (QString::fromStdString(tasks_[i].path) == path)
            return static_cast<int>(i);
    return -1;
}

int TaskListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(tasks_.size());
}

QVariant TaskListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const kwb::TaskInfo& task = tasks_[static_cast<size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return QString::fromStdString(task.title);
    case Qt::ToolTipRole:
        return QStringLiteral("%1\n%2\n\n%3")
            .arg(QString::fromStdString(task.id), QString::fromStdString(task.category),
                 QString::fromStdString(task.description));
    case PathRole:
        return QString::fromStdString(task.path);
    case IdRole:
        return QString::fromStdString(task.id);
    case CategoryRole:
        return QString::fromStdString(task.category);
    case DescriptionRole:
        return QString::fromStdString(task.description);
    case HasSolutionRole:
        return !task.solutionDirectory.empty();
    default:
        return {};
    }
}

QHash<int, QByteArray> TaskListModel::roleNames() const {
    QHash<int, QByteArray> names = QAbstractListModel::roleNames();
    names[PathRole] = "path";
    names[IdRole] = "taskId";
    names[CategoryRole] = "category";
    names[DescriptionRole] = "description";
    names[HasSolutionRole] = "hasSolution";
    return names;
}

} // namespace kwb::ui
