#pragma once

#include "engine/evaluation/ncu_collection.h"

#include <QDialog>
#include <vector>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace kwb::ui {

// What to collect with Nsight Compute from the open workspace: the sections (the workbench's
// four checked by default), a kernel name filter (the timeline's selected kernel when there is
// one) and how many launches to profile.
class CollectCountersDialog : public QDialog {
    Q_OBJECT
public:
    CollectCountersDialog(const QString& workspace, const QString& kernelFilter,
                          QWidget* parent = nullptr);

    kwb::CounterCollection choice() const;
    void setChoice(const kwb::CounterCollection& choice);
    // Why OK is refused now (no section, a filter that is not a regular expression), or "".
    QString problem() const;

private:
    void updateProblem();

    std::vector<QCheckBox*> sections_;
    QLineEdit* kernel_;
    QSpinBox* launches_;
    QCheckBox* ownKernelsOnly_;
    QLabel* problem_;
    QPushButton* ok_;
};

} // namespace kwb::ui
