#pragma once

#include "engine/diagnostics/diagnostic.h"

#include <QAbstractTableModel>
#include <QString>
#include <vector>

namespace kwb::ui {

// The latest compile diagnostics of every checked file, one row each, grouped by the file whose
// check reported them (a header's errors arrive with the .cu file that includes it). A new result
// for a file replaces that file's rows only, so the other rows keep their selection.
class ProblemsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { MessageColumn, FileColumn, PositionColumn, ColumnCount };
    enum Role {
        FilePathRole = Qt::UserRole + 1, // absolute path of the file the message names
        LineRole,                        // 1-based, 0 unknown
        ColumnRole,                      // 1-based, 0 unknown
        SeverityRole                     // int(kwb::Severity)
    };

    explicit ProblemsModel(QObject* parent = nullptr);

    // Files are shown relative to this folder (the candidate's).
    void setRootDirectory(const QString& directory);
    // Replaces the rows reported by the check of `checkedFile` (absolute path). A diagnostic
    // without a file (ptxas, the nvcc driver) is listed under `checkedFile`.
    void setDiagnostics(const QString& checkedFile, const std::vector<kwb::Diagnostic>& items);
    void removeFile(const QString& checkedFile);
    void clear();

    int errorCount() const;
    int warningCount() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

signals:
    void countsChanged(int errors, int warnings);

private:
    struct Row {
        QString checkedFile;
        QString file;
        int line = 0;
        int column = 0;
        kwb::Severity severity = kwb::Severity::Error;
        QString message;
    };
    QString displayPath(const QString& file) const;
    // [first, last) of the rows of `checkedFile`; first == last (the insertion point) if none.
    std::pair<int, int> rangeOf(const QString& checkedFile) const;

    QString root_;
    std::vector<Row> rows_;
};

} // namespace kwb::ui
