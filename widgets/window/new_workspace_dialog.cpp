#include "widgets/window/new_workspace_dialog.h"

#include "engine/system/resource_paths.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>

namespace kwb::ui {

NewWorkspaceDialog::NewWorkspaceDialog(const QString& taskPath, bool hasGpu, QWidget* parent)
    : QDialog(parent), task_(new QLineEdit(taskPath, this)),
      folder_(new QLineEdit(defaultFolderFor(taskPath), this)),
      fastPath_(new QRadioButton(tr("Fast path: kernels/*.cu compiled with NVRTC, launched from "
                                    "model_new.py (seconds per evaluation)"),
                                 this)),
      extensionLayout_(new QRadioButton(
          tr("CUDA-Agent layout: a torch extension built from kernels/ (minutes per build)"),
          this)),
      withSolution_(new QCheckBox(tr("Start from the task's bundled solution"), this)),
      hint_(new QLabel(this)), hasGpu_(hasGpu) {
    setWindowTitle(tr("New Workspace from Task"));
    auto* browseTask = new QPushButton(tr("Browse…"), this);
    auto* browseFolder = new QPushButton(tr("Browse…"), this);
    auto* taskRow = new QHBoxLayout;
    taskRow->addWidget(task_, 1);
    taskRow->addWidget(browseTask);
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(folder_, 1);
    folderRow->addWidget(browseFolder);
    // Without a GPU the fast path cannot verify anything; the extension layout verifies on
    // the CPU, so it is the useful default there.
    (hasGpu ? fastPath_ : extensionLayout_)->setChecked(true);
    hint_->setWordWrap(true);
    auto* form = new QFormLayout;
    form->addRow(tr("Task"), taskRow);
    form->addRow(tr("Folder"), folderRow);
    form->addRow(tr("Layout"), fastPath_);
    form->addRow(QString(), extensionLayout_);
    form->addRow(QString(), withSolution_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Create and Open"));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(hint_);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(browseTask, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, tr("Task file"),
                                                          QFileInfo(task_->text()).absolutePath(),
                                                          tr("Python task files (*.py)"));
        if (file.isEmpty())
            return;
        task_->setText(file);
        folder_->setText(defaultFolderFor(file));
    });
    connect(browseFolder, &QPushButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Workspace folder"), folder_->text());
        if (!dir.isEmpty())
            folder_->setText(dir);
    });
    for (QRadioButton* button : {fastPath_, extensionLayout_})
        connect(button, &QRadioButton::toggled, this, &NewWorkspaceDialog::updateHints);
    connect(task_, &QLineEdit::textChanged, this, &NewWorkspaceDialog::updateHints);
    updateHints();
}

QString NewWorkspaceDialog::defaultFolderFor(const QString& taskPath) {
    const QString base = QDir::home().filePath(QStringLiteral("kernel-workbench/workspaces"));
    const QString stem = QFileInfo(taskPath).completeBaseName();
    QString folder = QDir(base).filePath(stem.isEmpty() ? QStringLiteral("workspace") : stem);
    // A folder that exists is not overwritten: the next free name instead.
    for (int n = 2; QFileInfo::exists(folder); ++n)
        folder = QDir(base).filePath(QStringLiteral("%1-%2").arg(stem).arg(n));
    return folder;
}

QString NewWorkspaceDialog::bundledSolutionFor(const QString& taskPath) {
    const QString solution = QDir(QString::fromStdString(kwb::bundledSolutionsDirectory()))
                                 .filePath(QFileInfo(taskPath).completeBaseName());
    return QFileInfo(solution + "/model_new.py").isFile() ? solution : QString();
}

void NewWorkspaceDialog::updateHints() {
    const bool solution = !bundledSolutionFor(task_->text()).isEmpty();
    withSolution_->setEnabled(solution && extensionLayout_->isChecked());
    if (!withSolution_->isEnabled())
        withSolution_->setChecked(false);
    withSolution_->setToolTip(solution ? tr("The bundled solution uses the CUDA-Agent layout")
                                       : tr("This task has no bundled solution"));
    if (fastPath_->isChecked() && !hasGpu_)
        hint_->setText(tr("This machine has no CUDA GPU: a fast-path workspace gets NVRTC's "
                          "diagnostics, PTX and resource use while you type, but its kernels "
                          "cannot run, so no evaluation can verify or time them here."));
    else if (extensionLayout_->isChecked() && !hasGpu_)
        hint_->setText(tr("No CUDA GPU: evaluations build the extension and verify it on the "
                          "CPU (the first build takes minutes; Cancel stops it); timings are "
                          "the CPU's, not a GPU's."));
    else
        hint_->clear();
}

NewWorkspaceDialog::Choice NewWorkspaceDialog::choice() const {
    return {task_->text(), folder_->text(), fastPath_->isChecked(), withSolution_->isChecked()};
}

void NewWorkspaceDialog::setChoice(const Choice& choice) {
    task_->setText(choice.taskPath);
    folder_->setText(choice.folder);
    (choice.fastPath ? fastPath_ : extensionLayout_)->setChecked(true);
    updateHints();
    withSolution_->setChecked(choice.withSolution && withSolution_->isEnabled());
}

kwb::WorkspaceInitResult NewWorkspaceDialog::create(const Choice& choice) {
    kwb::WorkspaceInitOptions options;
    options.fastPath = choice.fastPath;
    if (choice.withSolution && !choice.fastPath)
        options.solutionDirectory = bundledSolutionFor(choice.taskPath).toStdString();
    if (choice.taskPath.isEmpty() || !QFileInfo(choice.taskPath).isFile()) {
        kwb::WorkspaceInitResult refused;
        refused.error = "no task file at '" + choice.taskPath.toStdString() + "'";
        return refused;
    }
    if (choice.folder.trimmed().isEmpty()) {
        kwb::WorkspaceInitResult refused;
        refused.error = "choose a folder for the workspace";
        return refused;
    }
    return kwb::initWorkspace(choice.taskPath.toStdString(), choice.folder.toStdString(), options);
}

} // namespace kwb::ui
