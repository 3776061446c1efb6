#include "widgets/models/diff_model.h"

#include <QBrush>
#include <QColor>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QPalette>

namespace kwb::ui {
namespace {

bool darkPalette() {
    return QGuiApplication::palette().color(QPalette::Base).lightnessF() < 0.5;
}

} // namespace

DiffModel::DiffModel(QObject* parent)
    : QAbstractTableModel(parent), codeFont_(QFontDatabase::systemFont(QFontDatabase::FixedFont)) {}

void DiffModel::setCodeFont(const QFont& font) {
    codeFont_ = font;
    if (!lines_.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1), {Qt::FontRole});
}

void DiffModel::setTexts(const QString& before, const QString& after, int context) {
    beginResetModel();
    lines_ = context < 0 ? diffLines(before, after) : unifiedDiff(before, after, context);
    stats_ = diffStats(lines_);
    endResetModel();
}

int DiffModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(lines_.size());
}

int DiffModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DiffModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const DiffLine& line = lines_[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == OldLineColumn)
            return line.oldLine > 0 ? QString::number(line.oldLine) : QString();
        if (index.column() == NewLineColumn)
            return line.newLine > 0 ? QString::number(line.newLine) : QString();
        switch (line.kind) {
        case DiffLineKind::Added:
            return QStringLiteral("+") + line.text;
        case DiffLineKind::Removed:
            return QStringLiteral("-") + line.text;
        case DiffLineKind::Context:
            return QStringLiteral(" ") + line.text;
        case DiffLineKind::Hunk:
            return line.text;
        }
        return {};
    case Qt::BackgroundRole: {
        const bool dark = darkPalette();
        if (line.kind == DiffLineKind::Added)
            return QBrush(dark ? QColor("#1f3d26") : QColor("#e6ffec"));
        if (line.kind == DiffLineKind::Removed)
            return QBrush(dark ? QColor("#4b2327") : QColor("#ffebe9"));
        if (line.kind == DiffLineKind::Hunk)
            return QBrush(dark ? QColor("#23304a") : QColor("#ddf4ff"));
        return {};
    }
    case Qt::ForegroundRole:
        if (index.column() != TextColumn || line.kind == DiffLineKind::Hunk)
            return QBrush(QGuiApplication::palette().color(QPalette::PlaceholderText));
        return {};
    case Qt::FontRole:
        return codeFont_;
    case Qt::TextAlignmentRole:
        if (index.column() != TextColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case KindRole:
        return static_cast<int>(line.kind);
    default:
        return {};
    }
}

QVariant DiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case OldLineColumn:
        return tr("Old");
    case NewLineColumn:
        return tr("New");
    case TextColumn:
        return tr("Line");
    default:
        return {};
    }
}

} // namespace kwb::ui
