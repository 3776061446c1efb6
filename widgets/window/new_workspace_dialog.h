#pragma once

#include "engine/workspace/workspace.h"

#include <QDialog>
#include <QString>

class QCheckBox;
class QLabel;
class QLineEdit;
class QRadioButton;

namespace kwb::ui {

// File > New Workspace from Task: a workspace for a task file (the fast path's NVRTC kernels,
// or CUDA Agent's torch-extension layout), optionally starting from the task's bundled
// solution, in a folder the user picks; the window then opens it for hand editing.
class NewWorkspaceDialog : public QDialog {
    Q_OBJECT
public:
    struct Choice {
        QString taskPath;
        QString folder;
        bool fastPath = true;
        bool withSolution = false;
    };

    NewWorkspaceDialog(const QString& taskPath, bool hasGpu, QWidget* parent = nullptr);

    Choice choice() const;
    void setChoice(const Choice& choice);
    // Creates the workspace; the result says where, or why not (a folder that is not empty is
    // refused, never overwritten).
    static kwb::WorkspaceInitResult create(const Choice& choice);
    // Where a task's workspace goes unless the user says otherwise: a new folder under
    // ~/kernel-workbench/workspaces named after the task.
    static QString defaultFolderFor(const QString& taskPath);
    // The bundled solution of a task, empty when it has none.
    static QString bundledSolutionFor(const QString& taskPath);

private:
    void updateHints();

    QLineEdit* task_;
    QLineEdit* folder_;
    QRadioButton* fastPath_;
    QRadioButton* extensionLayout_;
    QCheckBox* withSolution_;
    QLabel* hint_;
    bool hasGpu_;
};

} // namespace kwb::ui
