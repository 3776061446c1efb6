#include "widgets/window/settings_dialog.h"

#include "widgets/core/app_settings.h"
#include "widgets/core/engine_bridge.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

namespace kwb::ui {

SettingsDialog::SettingsDialog(AppSettings& settings, EngineBridge& bridge, QWidget* parent)
    : QDialog(parent), settings_(settings), bridge_(bridge), python_(new QLineEdit(this)),
      probeResult_(new QLabel(this)), workspaceRoot_(new QLineEdit(this)),
      theme_(new QComboBox(this)) {
    setWindowTitle(tr("Settings"));
    python_->setText(settings.pythonInterpreter());
    python_->setPlaceholderText(tr("auto-detect (KWB_PYTHON, project venv, PATH)"));
    probeResult_->setWordWrap(true);
    workspaceRoot_->setText(settings.workspaceRoot());
    theme_->addItem(tr("Dark"), themeName(Theme::Dark));
    theme_->addItem(tr("Light"), themeName(Theme::Light));
    theme_->setCurrentIndex(settings.theme() == Theme::Dark ? 0 : 1);

    auto* browsePython = new QPushButton(tr("Browse…"), this);
    auto* testPython = new QPushButton(tr("Test"), this);
    auto* pythonRow = new QHBoxLayout;
    pythonRow->addWidget(python_, 1);
    pythonRow->addWidget(browsePython);
    pythonRow->addWidget(testPython);
    auto* browseRoot = new QPushButton(tr("Browse…"), this);
    auto* rootRow = new QHBoxLayout;
    rootRow->addWidget(workspaceRoot_, 1);
    rootRow->addWidget(browseRoot);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* form = new QFormLayout(this);
    form->addRow(tr("Python for PyTorch tasks"), pythonRow);
    form->addRow(QString(), probeResult_);
    form->addRow(tr("Workspace root"), rootRow);
    form->addRow(tr("Theme"), theme_);
    form->addRow(buttons);

    connect(browsePython, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Python interpreter"), python_->text());
        if (!path.isEmpty())
            python_->setText(path);
    });
    connect(browseRoot, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getExistingDirectory(this, tr("Workspace root"), workspaceRoot_->text());
        if (!path.isEmpty())
            workspaceRoot_->setText(path);
    });
    connect(testPython, &QPushButton::clicked, this, &SettingsDialog::probe);
    connect(&bridge_, &EngineBridge::pythonProbeReady, this, &SettingsDialog::showProbe);
    connect(buttons, &QDialogButtonBox::accepted, this, &SettingsDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &SettingsDialog::reject);
    probe();
}

void SettingsDialog::probe() {
    probeResult_->setText(tr("Probing…"));
    bridge_.requestPythonProbe(python_->text().trimmed());
}

void SettingsDialog::showProbe(std::shared_ptr<const kwb::PythonProbe> probe) {
    const QString where = QString::fromStdString(probe->path);
    probeResult_->setText((probe->usable() ? QStringLiteral("✔ ") : QStringLiteral("✘ ")) +
                          QString::fromStdString(probe->summary()) +
                          (where.isEmpty() ? QString() : QStringLiteral("\n") + where));
    // A form layout does not give a wrapped label the height its new text needs once the
    // dialog is shown: the answer printed over the rows below. Grow the dialog to fit it.
    layout()->activate();
    const int needed = probeResult_->heightForWidth(probeResult_->width());
    if (probeResult_->height() < needed)
        resize(width(), height() + needed - probeResult_->height());
}

void SettingsDialog::accept() {
    settings_.setPythonInterpreter(python_->text().trimmed());
    settings_.setWorkspaceRoot(workspaceRoot_->text().trimmed());
    settings_.setTheme(themeFromName(theme_->currentData().toString()));
    settings_.sync();
    QDialog::accept();
}

} // namespace kwb::ui
