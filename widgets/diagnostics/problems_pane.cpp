#include "widgets/diagnostics/problems_pane.h"

#include "widgets/models/problems_model.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

namespace kwb::ui {

ProblemsPane::ProblemsPane(ProblemsModel* model, QWidget* parent)
    : QWidget(parent), model_(model), summary_(new QLabel(this)), status_(new QLabel(this)),
      view_(new QTreeView(this)) {
    view_->setModel(model);
    view_->setRootIsDecorated(false);
    view_->setUniformRowHeights(true);
    view_->setAlternatingRowColors(true);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view_->header()->setStretchLastSection(false);
    view_->header()->setSectionResizeMode(ProblemsModel::MessageColumn, QHeaderView::Stretch);
    view_->header()->setSectionResizeMode(ProblemsModel::FileColumn, QHeaderView::ResizeToContents);
    view_->header()->setSectionResizeMode(ProblemsModel::PositionColumn,
                                          QHeaderView::ResizeToContents);
    status_->setForegroundRole(QPalette::PlaceholderText);
    status_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);

    auto* top = new QHBoxLayout;
    top->setContentsMargins(6, 2, 6, 2);
    top->addWidget(summary_);
    top->addStretch(1);
    top->addWidget(status_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(top);
    layout->addWidget(view_, 1);

    connect(model, &ProblemsModel::countsChanged, this, &ProblemsPane::updateSummary);
    // Double-click or Enter (or a single click on styles that activate on one).
    connect(view_, &QTreeView::activated, this, [this](const QModelIndex& index) {
        emit problemActivated(index.data(ProblemsModel::FilePathRole).toString(),
                              index.data(ProblemsModel::LineRole).toInt(),
                              index.data(ProblemsModel::ColumnRole).toInt());
    });
    updateSummary(model->errorCount(), model->warningCount());
}

void ProblemsPane::setStatusText(const QString& text) {
    status_->setText(text);
}

void ProblemsPane::updateSummary(int errors, int warnings) {
    if (errors == 0 && warnings == 0) {
        summary_->setText(tr("No problems in the open kernel files"));
        return;
    }
    summary_->setText(tr("%n error(s)", nullptr, errors) + QStringLiteral(", ") +
                      tr("%n warning(s)", nullptr, warnings));
}

} // namespace kwb::ui
