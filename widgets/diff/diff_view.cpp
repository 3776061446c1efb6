#include "widgets/diff/diff_view.h"

#include "widgets/core/workbench_fonts.h"
#include "widgets/models/diff_model.h"

#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

namespace kwb::ui {

DiffView::DiffView(QWidget* parent)
    : QWidget(parent), title_(new QLabel(this)), summary_(new QLabel(this)),
      wholeFile_(new QCheckBox(tr("Whole file"), this)), view_(new QTreeView(this)),
      model_(new DiffModel(this)) {
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    wholeFile_->setToolTip(tr("Show every line instead of the changes with 3 lines around them"));
    view_->setModel(model_);
    model_->setCodeFont(codeFont(9));
    view_->setRootIsDecorated(false);
    view_->setUniformRowHeights(true);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view_->header()->setStretchLastSection(true);
    view_->header()->setSectionResizeMode(DiffModel::OldLineColumn, QHeaderView::ResizeToContents);
    view_->header()->setSectionResizeMode(DiffModel::NewLineColumn, QHeaderView::ResizeToContents);
    connect(wholeFile_, &QCheckBox::toggled, this, &DiffView::refresh);

    auto* top = new QHBoxLayout;
    top->addWidget(title_, 1);
    top->addWidget(summary_);
    top->addWidget(wholeFile_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(top);
    layout->addWidget(view_, 1);
}

void DiffView::showDiff(const QString& title, const QString& before, const QString& after) {
    title_->setText(title);
    before_ = before;
    after_ = after;
    refresh();
}

void DiffView::refresh() {
    model_->setTexts(before_, after_, wholeFile_->isChecked() ? -1 : 3);
    const DiffStats stats = model_->stats();
    summary_->setText(stats.added == 0 && stats.removed == 0
                          ? tr("No differences")
                          : QStringLiteral("<span style='color:#2da44e'>+%1</span> "
                                           "<span style='color:#cf222e'>−%2</span>")
                                .arg(stats.added)
                                .arg(stats.removed));
}

QString DiffView::titleText() const {
    return title_->text();
}

QString DiffView::summaryText() const {
    return summary_->text();
}

QDialog* showDiffDialog(QWidget* parent, const QString& title, const QString& before,
                        const QString& after) {
    auto* dialog = new QDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(title);
    auto* view = new DiffView(dialog);
    view->showDiff(title, before, after);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(view, 1);
    layout->addWidget(buttons);
    dialog->resize(900, 640);
    dialog->show();
    return dialog;
}

} // namespace kwb::ui
