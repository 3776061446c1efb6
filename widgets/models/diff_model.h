#pragma once

#include "widgets/models/line_diff.h"

#include <QAbstractTableModel>
#include <QFont>

namespace kwb::ui {

// A unified diff as a table: old line number, new line number, and the line with its +/-
// prefix; added rows green, removed rows red, hunk headers muted.
class DiffModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { OldLineColumn, NewLineColumn, TextColumn, ColumnCount };
    enum Role { KindRole = Qt::UserRole + 1 }; // int(DiffLineKind)

    explicit DiffModel(QObject* parent = nullptr);

    // `context` unchanged lines around each change; negative shows every line.
    void setTexts(const QString& before, const QString& after, int context = 3);
    // The lines' font (the view passes the workbench's pinned code font); the system's fixed
    // font until then.
    void setCodeFont(const QFont& font);
    const std::vector<DiffLine>& lines() const { return lines_; }
    DiffStats stats() const { return stats_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<DiffLine> lines_;
    DiffStats stats_;
    QFont codeFont_;
};

} // namespace kwb::ui
