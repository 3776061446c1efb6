#pragma once

#include "agent/rollout/rollout_runner.h"

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace kwb::ui {

// Asks for what a rollout runs, as `kwb rollout` takes it: the task set (a KernelBench checkout,
// a folder of task files, Ops-6K rows), K episodes per task, N at once, the provider and model,
// the device and the evaluation profile. The provider fields start from the agent pane's.
class RolloutLaunchDialog : public QDialog {
    Q_OBJECT
public:
    RolloutLaunchDialog(const agent::ProviderSettings& provider, const QString& python,
                        QWidget* parent = nullptr);

    void setTaskSet(const QString& path);
    // The rollout asked for; valid only when problem() is empty.
    agent::RolloutConfig config() const;
    // Why the fields cannot start a rollout (shown under them); empty when they can.
    QString problem() const;

    QLineEdit* taskSetEdit() const { return taskSet_; }
    QLineEdit* modelEdit() const { return model_; }
    QSpinBox* episodesPerTaskBox() const { return episodesPerTask_; }
    QSpinBox* concurrencyBox() const { return concurrency_; }
    QComboBox* deviceBox() const { return device_; }
    QComboBox* providerBox() const { return provider_; }
    QLineEdit* baseUrlEdit() const { return baseUrl_; }
    QSpinBox* maxTokensBox() const { return maxTokens_; }

private:
    void updateProblem();

    QString python_;
    QLineEdit* taskSet_;
    QSpinBox* limit_;
    QSpinBox* episodesPerTask_;
    QSpinBox* concurrency_;
    QSpinBox* maxTurns_;
    QComboBox* provider_;
    QLineEdit* baseUrl_;
    QLineEdit* model_;
    QLineEdit* apiKeyEnv_;
    QSpinBox* maxTokens_;
    QComboBox* device_;
    QComboBox* profile_;
    QLabel* problem_;
    QDialogButtonBox* buttons_;
};

} // namespace kwb::ui
