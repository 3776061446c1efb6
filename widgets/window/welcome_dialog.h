#pragma once

#include "agent/providers/connection_check.h"
#include "engine/system/machine_readiness.h"
#include "widgets/core/app_settings.h"

#include <QDialog>
#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QVBoxLayout;

namespace kwb::ui {

class EngineBridge;
class TaskListModel;

// The first-run page (and Help > Welcome): what this machine has and what each missing piece
// turns off, with how to get it; a bundled task opened with one click; an LLM provider for
// agents, tried with a real request before it is kept.
class WelcomeDialog : public QDialog {
    Q_OBJECT
public:
    WelcomeDialog(AppSettings& settings, EngineBridge& bridge, TaskListModel* tasks,
                  QWidget* parent = nullptr);

    // The machine as the latest system report found it (null: detection still running).
    void showReport(std::shared_ptr<const kwb::SystemReport> report);

    // For tests.
    const std::vector<kwb::ReadinessItem>& readiness() const { return readiness_; }
    QString machineText() const; // everything the machine section says
    QComboBox* taskChoice() const { return taskChoice_; }
    QPushButton* openTaskButton() const { return openTask_; }
    QComboBox* providerChoice() const { return provider_; }
    QLineEdit* baseUrlField() const { return baseUrl_; }
    QLineEdit* modelField() const { return model_; }
    QLineEdit* apiKeyEnvField() const { return apiKeyEnv_; }
    QPushButton* testButton() const { return test_; }
    QPushButton* useButton() const { return use_; }
    QString connectionText() const;
    QCheckBox* showAtStartBox() const { return showAtStart_; }

signals:
    void openTaskRequested(const QString& taskPath);
    // The user kept this provider for agents (it is in the settings too).
    void providerChosen(const AppSettings::AgentProvider& provider);

private:
    QWidget* buildMachineSection();
    QWidget* buildTaskSection();
    QWidget* buildProviderSection();
    void fillTasks();
    kwb::agent::ProviderSettings providerSettings() const;
    AppSettings::AgentProvider chosenProvider() const;
    void showConnection(std::shared_ptr<const kwb::agent::ConnectionCheck> check);

    AppSettings& settings_;
    EngineBridge& bridge_;
    TaskListModel* tasks_;
    std::vector<kwb::ReadinessItem> readiness_;
    QVBoxLayout* machineRows_ = nullptr;
    QLabel* machineStatus_ = nullptr;
    QComboBox* taskChoice_ = nullptr;
    QPushButton* openTask_ = nullptr;
    QComboBox* provider_ = nullptr;
    QLineEdit* baseUrl_ = nullptr;
    QLineEdit* model_ = nullptr;
    QLineEdit* apiKeyEnv_ = nullptr;
    QPushButton* test_ = nullptr;
    QPushButton* use_ = nullptr;
    QLabel* connection_ = nullptr;
    QCheckBox* showAtStart_ = nullptr;
};

} // namespace kwb::ui
