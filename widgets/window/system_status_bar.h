#pragma once

#include "engine/system/system_report.h"

#include <QStatusBar>
#include <memory>

class QLabel;

namespace kwb::ui {

// GPU / driver / CUDA / Python-torch at a glance. "No GPU" is a normal, stated condition.
class SystemStatusBar : public QStatusBar {
    Q_OBJECT
public:
    explicit SystemStatusBar(QWidget* parent = nullptr);

    void showDetecting();
    void showReport(const kwb::SystemReport& report);

    QString gpuText() const;
    QString pythonText() const;

private:
    QLabel* gpu_;
    QLabel* driver_;
    QLabel* cuda_;
    QLabel* python_;
};

} // namespace kwb::ui
