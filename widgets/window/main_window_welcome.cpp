// MainWindow: the welcome page, and the model agents start with.
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/window/log_pane.h"
#include "widgets/window/main_window.h"
#include "widgets/window/welcome_dialog.h"

namespace kwb::ui {

void MainWindow::showWelcome() {
    if (!welcome_) {
        welcome_ = new WelcomeDialog(settings_, bridge_, taskModel_, this);
        connect(welcome_, &WelcomeDialog::openTaskRequested, this, [this](const QString& path) {
            if (openTask(path))
                welcome_->close();
        });
        connect(welcome_, &WelcomeDialog::providerChosen, this,
                [this](const AppSettings::AgentProvider& provider) {
                    useAgentProvider(provider);
                    log_->append(LogLevel::Info,
                                 tr("Agents start with %1 (welcome page)").arg(provider.model));
                });
    }
    welcome_->showReport(systemReport_);
    welcome_->show();
    welcome_->raise();
    welcome_->activateWindow();
}

void MainWindow::useAgentProvider(const AppSettings::AgentProvider& provider) {
    const auto kind = agent::parseProviderKind(provider.kind.toStdString());
    if (!kind || provider.model.isEmpty())
        return; // none kept: the Agent tab keeps its own defaults
    agentPanes_->agentPane()->setProvider(*kind, provider.baseUrl, provider.model,
                                          provider.apiKeyEnv);
}

} // namespace kwb::ui
