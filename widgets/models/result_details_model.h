#pragma once

#include "engine/evaluation/evaluation_result.h"

#include <QAbstractItemModel>
#include <memory>

namespace kwb::ui {

// The result panel's tree: two groups, the integrity flags (code, severity, reason) and the
// pipeline stages (name, status, duration, summary), each stage with its log as a child row.
class ResultDetailsModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Name, Status, Duration, Detail, ColumnCount };
    enum Group { Flags, Stages, GroupCount };
    // The full text behind a row: a flag's reason, a stage's log.
    static constexpr int FullTextRole = Qt::UserRole + 1;

    explicit ResultDetailsModel(QObject* parent = nullptr);

    void setResult(std::shared_ptr<const kwb::EvaluationResult> result);
    const std::shared_ptr<const kwb::EvaluationResult>& result() const { return result_; }

    QModelIndex groupIndex(Group group) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    // internalId: 0 a group row, 1 + group a flag or stage row, kLogBase + stage a stage's log.
    static constexpr quintptr kLogBase = 1 + GroupCount;

    QVariant groupData(int row, int column, int role) const;
    QVariant flagData(const kwb::IntegrityFlag& flag, int column, int role) const;
    QVariant stageData(const kwb::StageRecord& stage, int column, int role) const;
    QVariant logData(const kwb::StageRecord& stage, int column, int role) const;

    std::shared_ptr<const kwb::EvaluationResult> result_;
};

// Colours shared by the panel's labels and the tree: the diagnostics' severity palette
// (diagnostic_icons.h), readable on the dark and light themes.
QColor severityColor(kwb::FlagSeverity severity);

} // namespace kwb::ui
