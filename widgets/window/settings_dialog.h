#pragma once

#include "engine/system/python_environment.h"

#include <QDialog>
#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;

namespace kwb::ui {

class AppSettings;
class EngineBridge;

// Preferences: the task Python (with a live probe), the workspace root and the theme.
class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    SettingsDialog(AppSettings& settings, EngineBridge& bridge, QWidget* parent = nullptr);

    void accept() override;

private:
    void probe();
    void showProbe(std::shared_ptr<const kwb::PythonProbe> probe);

    AppSettings& settings_;
    EngineBridge& bridge_;
    QLineEdit* python_;
    QLabel* probeResult_;
    QLineEdit* workspaceRoot_;
    QComboBox* theme_;
};

} // namespace kwb::ui
