#include "widgets/counters/collect_counters_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

namespace kwb::ui {

CollectCountersDialog::CollectCountersDialog(const QString& workspace, const QString& kernelFilter,
                                             QWidget* parent)
    : QDialog(parent), kernel_(new QLineEdit(this)), launches_(new QSpinBox(this)),
      ownKernelsOnly_(new QCheckBox(tr("Only the workspace's own kernels"), this)),
      problem_(new QLabel(this)) {
    setWindowTitle(tr("Collect Hardware Counters"));
    auto* intro = new QLabel(
        tr("Evaluates %1 once more with its profile stage under Nsight Compute. The counters "
           "open in this dock; that evaluation measures no speed-up (ncu replays each kernel).")
            .arg(QDir::toNativeSeparators(workspace)),
        this);
    intro->setWordWrap(true);

    auto* grid = new QGridLayout;
    int index = 0;
    for (const std::string& name : kwb::kOfferedNcuSections) {
        auto* box = new QCheckBox(QString::fromStdString(name), this);
        box->setChecked(std::find(kwb::kDefaultNcuSections.begin(), kwb::kDefaultNcuSections.end(),
                                  name) != kwb::kDefaultNcuSections.end());
        connect(box, &QCheckBox::toggled, this, &CollectCountersDialog::updateProblem);
        grid->addWidget(box, index / 2, index % 2);
        sections_.push_back(box);
        ++index;
    }
    kernel_->setText(kernelFilter);
    kernel_->setPlaceholderText(tr("every kernel"));
    kernel_->setToolTip(tr("A regular expression over kernel names (ncu's --kernel-name regex:)"));
    connect(kernel_, &QLineEdit::textChanged, this, &CollectCountersDialog::updateProblem);
    launches_->setRange(1, 1000);
    launches_->setValue(4);
    launches_->setToolTip(tr("Kernel launches profiled (ncu's --launch-count)"));

    ownKernelsOnly_->setChecked(true);
    ownKernelsOnly_->setToolTip(tr("Without a name filter: the __global__ functions the "
                                   "workspace's sources declare, not torch's or the judge's"));
    auto* form = new QFormLayout;
    form->addRow(tr("Sections:"), grid);
    form->addRow(tr("Kernels:"), kernel_);
    form->addRow(tr("Launches:"), launches_);
    form->addRow(QString(), ownKernelsOnly_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    ok_ = buttons->button(QDialogButtonBox::Ok);
    ok_->setText(tr("Collect"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    problem_->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(problem_);
    layout->addWidget(buttons);
    updateProblem();
}

kwb::CounterCollection CollectCountersDialog::choice() const {
    kwb::CounterCollection collection;
    for (const QCheckBox* box : sections_)
        if (box->isChecked())
            collection.sections.push_back(box->text().toStdString());
    collection.kernelRegex = kernel_->text().trimmed().toStdString();
    collection.launchCount = launches_->value();
    collection.ownKernelsOnly = ownKernelsOnly_->isChecked();
    return collection;
}

void CollectCountersDialog::setChoice(const kwb::CounterCollection& choice) {
    for (QCheckBox* box : sections_)
        box->setChecked(std::find(choice.sections.begin(), choice.sections.end(),
                                  box->text().toStdString()) != choice.sections.end());
    kernel_->setText(QString::fromStdString(choice.kernelRegex));
    launches_->setValue(choice.launchCount);
    ownKernelsOnly_->setChecked(choice.ownKernelsOnly);
}

QString CollectCountersDialog::problem() const {
    if (std::none_of(sections_.begin(), sections_.end(),
                     [](const QCheckBox* box) { return box->isChecked(); }))
        return tr("Choose at least one section.");
    const QString filter = kernel_->text().trimmed();
    if (!filter.isEmpty() && !QRegularExpression(filter).isValid())
        return tr("The kernel filter is not a regular expression: %1")
            .arg(QRegularExpression(filter).errorString());
    return {};
}

void CollectCountersDialog::updateProblem() {
    const QString why = problem();
    problem_->setText(why);
    problem_->setVisible(!why.isEmpty());
    ok_->setEnabled(why.isEmpty());
}

} // namespace kwb::ui
