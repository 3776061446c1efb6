#include "widgets/models/result_details_model.h"

#include "widgets/models/diagnostic_icons.h"

#include <QColor>

namespace kwb::ui {

QColor severityColor(kwb::FlagSeverity severity) {
    // The diagnostics' palette: a strict flag looks like an error, a warning like a warning.
    switch (severity) {
    case kwb::FlagSeverity::Strict:
        return severityColor(kwb::Severity::Error);
    case kwb::FlagSeverity::Warning:
        return severityColor(kwb::Severity::Warning);
    case kwb::FlagSeverity::Info:
        break;
    }
    return severityColor(kwb::Severity::Note);
}

namespace {

QColor stageColor(kwb::StageStatus status) {
    switch (status) {
    case kwb::StageStatus::Passed:
        return QColor(0x3f, 0xae, 0x5a);
    case kwb::StageStatus::Failed:
        return severityColor(kwb::FlagSeverity::Strict);
    case kwb::StageStatus::Skipped:
    case kwb::StageStatus::NotRun:
        break;
    }
    return QColor(0x8a, 0x8a, 0x8a);
}

QString firstLine(const std::string& text) {
    const QString all = QString::fromStdString(text).trimmed();
    const qsizetype end = all.indexOf(QLatin1Char('\n'));
    return end < 0 ? all : all.left(end) + QStringLiteral(" …");
}

} // namespace

ResultDetailsModel::ResultDetailsModel(QObject* parent) : QAbstractItemModel(parent) {}

void ResultDetailsModel::setResult(std::shared_ptr<const kwb::EvaluationResult> result) {
    beginResetModel();
    result_ = std::move(result);
    endResetModel();
}

QModelIndex ResultDetailsModel::groupIndex(Group group) const {
    return index(group, 0);
}

QModelIndex ResultDetailsModel::index(int row, int column, const QModelIndex& parent) const {
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, quintptr(0));
    if (parent.internalId() == 0)
        return createIndex(row, column, quintptr(1 + parent.row()));
    // Only stage rows have children (their log).
    return createIndex(row, column, kLogBase + static_cast<quintptr>(parent.row()));
}

QModelIndex ResultDetailsModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == 0)
        return {};
    if (child.internalId() < kLogBase)
        return createIndex(static_cast<int>(child.internalId() - 1), 0, quintptr(0));
    return createIndex(static_cast<int>(child.internalId() - kLogBase), 0, quintptr(1 + Stages));
}

int ResultDetailsModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid())
        return GroupCount;
    if (parent.column() != 0 || !result_)
        return 0;
    if (parent.internalId() == 0)
        return static_cast<int>(parent.row() == Flags ? result_->flags.size()
                                                      : result_->stages.size());
    if (parent.internalId() == 1 + Stages)
        return result_->stages[static_cast<std::size_t>(parent.row())].log.empty() ? 0 : 1;
    return 0;
}

int ResultDetailsModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant ResultDetailsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const quintptr id = index.internalId();
    if (id == 0)
        return groupData(index.row(), index.column(), role);
    if (!result_)
        return {};
    const auto row = static_cast<std::size_t>(index.row());
    if (id == 1 + Flags)
        return flagData(result_->flags[row], index.column(), role);
    if (id == 1 + Stages)
        return stageData(result_->stages[row], index.column(), role);
    return logData(result_->stages[id - kLogBase], index.column(), role);
}

QVariant ResultDetailsModel::groupData(int row, int column, int role) const {
    if (role != Qt::DisplayRole || column != Name)
        return {};
    const int count =
        result_ ? static_cast<int>(row == Flags ? result_->flags.size() : result_->stages.size())
                : 0;
    return row == Flags ? tr("Integrity flags (%1)").arg(count) : tr("Stages (%1)").arg(count);
}

QVariant ResultDetailsModel::flagData(const kwb::IntegrityFlag& flag, int column, int role) const {
    if (role == Qt::ForegroundRole && (column == Name || column == Status))
        return severityColor(flag.severity);
    if (role == Qt::ToolTipRole || role == FullTextRole)
        return QString::fromStdString(flag.reason);
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case Name:
        return QString::fromStdString(flag.code);
    case Status:
        return QString::fromStdString(kwb::toString(flag.severity));
    case Detail:
        return firstLine(flag.reason);
    default:
        return {};
    }
}

QVariant ResultDetailsModel::stageData(const kwb::StageRecord& stage, int column, int role) const {
    if (role == Qt::ForegroundRole && column == Status)
        return stageColor(stage.status);
    if (role == FullTextRole)
        return QString::fromStdString(stage.log.empty() ? stage.summary : stage.log);
    if (role == Qt::ToolTipRole && column == Detail)
        return QString::fromStdString(stage.summary);
    if (role == Qt::TextAlignmentRole && column == Duration)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case Name:
        return QString::fromStdString(stage.name);
    case Status:
        return QString::fromStdString(kwb::toString(stage.status));
    case Duration:
        return QStringLiteral("%1 s").arg(stage.seconds, 0, 'f', 2);
    case Detail:
        return firstLine(stage.summary);
    default:
        return {};
    }
}

QVariant ResultDetailsModel::logData(const kwb::StageRecord& stage, int column, int role) const {
    if (role == FullTextRole || (role == Qt::ToolTipRole && column == Detail))
        return QString::fromStdString(stage.log);
    if (role != Qt::DisplayRole)
        return {};
    if (column == Name)
        return tr("log");
    if (column == Detail)
        return firstLine(stage.log);
    return {};
}

QVariant ResultDetailsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Name:
        return tr("Name");
    case Status:
        return tr("Status");
    case Duration:
        return tr("Duration");
    case Detail:
        return tr("Detail");
    default:
        return {};
    }
}

} // namespace kwb::ui
