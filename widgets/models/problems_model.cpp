#include "widgets/models/problems_model.h"

#include "widgets/models/diagnostic_icons.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>

namespace kwb::ui {

ProblemsModel::ProblemsModel(QObject* parent) : QAbstractTableModel(parent) {}

void ProblemsModel::setRootDirectory(const QString& directory) {
    root_ = directory;
    if (!rows_.empty())
        emit dataChanged(index(0, FileColumn), index(rowCount() - 1, FileColumn),
                         {Qt::DisplayRole});
}

QString ProblemsModel::displayPath(const QString& file) const {
    if (root_.isEmpty())
        return QFileInfo(file).fileName();
    const QString relative = QDir(root_).relativeFilePath(file);
    return relative.startsWith(QStringLiteral("..")) ? file : relative;
}

std::pair<int, int> ProblemsModel::rangeOf(const QString& checkedFile) const {
    // Groups are kept sorted by checked file, so the group (or its place) is found in order.
    int first = 0;
    while (first < static_cast<int>(rows_.size()) && rows_[first].checkedFile < checkedFile)
        ++first;
    int last = first;
    while (last < static_cast<int>(rows_.size()) && rows_[last].checkedFile == checkedFile)
        ++last;
    return {first, last};
}

void ProblemsModel::setDiagnostics(const QString& checkedFile,
                                   const std::vector<kwb::Diagnostic>& items) {
    std::vector<Row> fresh;
    fresh.reserve(items.size());
    for (const kwb::Diagnostic& item : items) {
        Row row;
        row.checkedFile = checkedFile;
        row.file = item.file.empty() ? checkedFile : QString::fromStdString(item.file);
        row.line = item.line;
        row.column = item.column;
        row.severity = item.severity;
        row.message = QString::fromStdString(item.message);
        fresh.push_back(std::move(row));
    }
    // The checked file's own messages first, then by position.
    std::stable_sort(fresh.begin(), fresh.end(), [&](const Row& a, const Row& b) {
        const bool aOwn = a.file == checkedFile, bOwn = b.file == checkedFile;
        if (aOwn != bOwn)
            return aOwn;
        if (a.file != b.file)
            return a.file < b.file;
        return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });

    const auto [first, last] = rangeOf(checkedFile);
    if (last > first) {
        beginRemoveRows({}, first, last - 1);
        rows_.erase(rows_.begin() + first, rows_.begin() + last);
        endRemoveRows();
    }
    if (!fresh.empty()) {
        beginInsertRows({}, first, first + static_cast<int>(fresh.size()) - 1);
        rows_.insert(rows_.begin() + first, std::make_move_iterator(fresh.begin()),
                     std::make_move_iterator(fresh.end()));
        endInsertRows();
    }
    emit countsChanged(errorCount(), warningCount());
}

void ProblemsModel::removeFile(const QString& checkedFile) {
    setDiagnostics(checkedFile, {});
}

void ProblemsModel::clear() {
    if (rows_.empty())
        return;
    beginResetModel();
    rows_.clear();
    endResetModel();
    emit countsChanged(0, 0);
}

int ProblemsModel::errorCount() const {
    return static_cast<int>(std::count_if(rows_.begin(), rows_.end(), [](const Row& row) {
        return row.severity == kwb::Severity::Error;
    }));
}

int ProblemsModel::warningCount() const {
    return static_cast<int>(std::count_if(rows_.begin(), rows_.end(), [](const Row& row) {
        return row.severity == kwb::Severity::Warning;
    }));
}

int ProblemsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ProblemsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ProblemsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = rows_[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == MessageColumn)
            return row.message;
        if (index.column() == FileColumn)
            return displayPath(row.file);
        if (row.line <= 0)
            return QString();
        return row.column > 0 ? QStringLiteral("%1:%2").arg(row.line).arg(row.column)
                              : QString::number(row.line);
    case Qt::DecorationRole:
        if (index.column() == MessageColumn)
            return severityIcon(row.severity);
        return {};
    case Qt::ToolTipRole:
        return QStringLiteral("%1:%2:%3: %4: %5")
            .arg(displayPath(row.file))
            .arg(row.line)
            .arg(row.column)
            .arg(QString::fromStdString(toString(row.severity)), row.message);
    case FilePathRole:
        return row.file;
    case LineRole:
        return row.line;
    case ColumnRole:
        return row.column;
    case SeverityRole:
        return static_cast<int>(row.severity);
    default:
        return {};
    }
}

QVariant ProblemsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case MessageColumn:
        return tr("Message");
    case FileColumn:
        return tr("File");
    case PositionColumn:
        return tr("Line");
    default:
        return {};
    }
}

} // namespace kwb::ui
