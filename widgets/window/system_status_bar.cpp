#include "widgets/window/system_status_bar.h"

#include <QLabel>

namespace kwb::ui {
namespace {
QLabel* makeField(QWidget* parent) {
    auto* label = new QLabel(parent);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setFrameShape(QFrame::StyledPanel);
    label->setContentsMargins(6, 0, 6, 0);
    return label;
}
} // namespace

SystemStatusBar::SystemStatusBar(QWidget* parent)
    : QStatusBar(parent), gpu_(makeField(this)), driver_(makeField(this)), cuda_(makeField(this)),
      python_(makeField(this)) {
    addPermanentWidget(gpu_);
    addPermanentWidget(driver_);
    addPermanentWidget(cuda_);
    addPermanentWidget(python_);
    showDetecting();
}

void SystemStatusBar::showDetecting() {
    gpu_->setText(tr("GPU: detecting…"));
    driver_->clear();
    cuda_->clear();
    python_->setText(tr("Python: detecting…"));
}

void SystemStatusBar::showReport(const kwb::SystemReport& report) {
    const bool hasGpu = report.gpus.hasGpu();
    gpu_->setText(hasGpu ? tr("GPU: %1").arg(QString::fromStdString(report.gpuText()))
                         : tr("No GPU — CPU mode"));
    gpu_->setToolTip(QString::fromStdString(report.gpus.status));
    driver_->setText(QString::fromStdString(report.driverText()));
    cuda_->setText(QString::fromStdString(report.cudaText()));
    const QString python = QString::fromStdString(report.pythonText());
    python_->setText(report.python.usable() ? tr("Python: %1").arg(python) : python);
    python_->setToolTip(
        QString::fromStdString(report.python.path + " (" + toString(report.python.source) + ")"));
    python_->setStyleSheet(report.python.usable() ? QString() : QStringLiteral("color: #e06c75"));
}

QString SystemStatusBar::gpuText() const {
    return gpu_->text();
}

QString SystemStatusBar::pythonText() const {
    return python_->text();
}

} // namespace kwb::ui
