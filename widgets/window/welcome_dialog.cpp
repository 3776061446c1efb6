#include "widgets/window/welcome_dialog.h"

#include "widgets/core/engine_bridge.h"
#include "widgets/models/task_list_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

namespace kwb::ui {
namespace {

QLabel* wrappedLabel(const QString& text, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Long install hints wrap instead of widening the dialog.
    label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    return label;
}

} // namespace

WelcomeDialog::WelcomeDialog(AppSettings& settings, EngineBridge& bridge, TaskListModel* tasks,
                             QWidget* parent)
    : QDialog(parent), settings_(settings), bridge_(bridge), tasks_(tasks) {
    setWindowTitle(tr("Welcome to Kernel Workbench"));
    auto* content = new QWidget(this);
    auto* column = new QVBoxLayout(content);
    column->addWidget(wrappedLabel(
        tr("Write CUDA kernels that beat PyTorch and torch.compile, by hand or with an LLM "
           "agent. Here is what this machine can do, a task to start from, and the model "
           "agents will use."),
        content));
    column->addWidget(buildMachineSection());
    column->addWidget(buildTaskSection());
    column->addWidget(buildProviderSection());
    column->addStretch();

    // The page scrolls rather than growing past a 768-pixel screen.
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(content);

    showAtStart_ = new QCheckBox(tr("Show this at start"), this);
    showAtStart_->setChecked(settings_.showWelcomeAtStart());
    connect(showAtStart_, &QCheckBox::toggled, this,
            [this](bool show) { settings_.setShowWelcomeAtStart(show); });
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(showAtStart_);
    bottom->addStretch();
    bottom->addWidget(buttons);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(scroll, 1);
    layout->addLayout(bottom);
    resize(720, 640);

    connect(&bridge_, &EngineBridge::connectionChecked, this, &WelcomeDialog::showConnection);
    connect(tasks_, &QAbstractItemModel::modelReset, this, &WelcomeDialog::fillTasks);
    fillTasks();
}

QWidget* WelcomeDialog::buildMachineSection() {
    auto* box = new QGroupBox(tr("This machine"), this);
    auto* layout = new QVBoxLayout(box);
    machineStatus_ = wrappedLabel(tr("Looking at the GPU, CUDA, Python and the sandbox…"), box);
    layout->addWidget(machineStatus_);
    machineRows_ = new QVBoxLayout;
    layout->addLayout(machineRows_);
    return box;
}

QWidget* WelcomeDialog::buildTaskSection() {
    auto* box = new QGroupBox(tr("Start with a task"), this);
    auto* row = new QHBoxLayout(box);
    taskChoice_ = new QComboBox(box);
    taskChoice_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    taskChoice_->setMinimumContentsLength(24);
    openTask_ = new QPushButton(tr("Open"), box);
    openTask_->setToolTip(tr("Opens the task with its reference solution; File > New Workspace "
                             "from Task makes one you can edit."));
    row->addWidget(taskChoice_, 1);
    row->addWidget(openTask_);
    connect(openTask_, &QPushButton::clicked, this, [this] {
        const QString path = taskChoice_->currentData().toString();
        if (!path.isEmpty())
            emit openTaskRequested(path);
    });
    return box;
}

QWidget* WelcomeDialog::buildProviderSection() {
    auto* box = new QGroupBox(tr("A model for agents"), this);
    auto* form = new QFormLayout(box);
    provider_ = new QComboBox(box);
    provider_->addItem(tr("OpenAI-compatible (OpenAI, vLLM, SGLang, llama.cpp, Ollama)"),
                       QString::fromUtf8(agent::providerKindName(agent::ProviderKind::OpenAiChat)));
    provider_->addItem(tr("Anthropic Messages"), QString::fromUtf8(agent::providerKindName(
                                                     agent::ProviderKind::AnthropicMessages)));
    baseUrl_ = new QLineEdit(box);
    model_ = new QLineEdit(box);
    apiKeyEnv_ = new QLineEdit(box);
    apiKeyEnv_->setToolTip(tr("The environment variable that holds the key. The key itself is "
                              "never stored or shown."));
    test_ = new QPushButton(tr("Test connection"), box);
    use_ = new QPushButton(tr("Use for agents"), box);
    connection_ = wrappedLabel(QString(), box);
    auto* actions = new QHBoxLayout;
    actions->addWidget(test_);
    actions->addWidget(use_);
    actions->addStretch();
    form->addRow(tr("Provider"), provider_);
    form->addRow(tr("Base URL"), baseUrl_);
    form->addRow(tr("Model"), model_);
    form->addRow(tr("API key variable"), apiKeyEnv_);
    form->addRow(actions);
    form->addRow(connection_);

    const auto placeholders = [this] {
        const auto kind =
            agent::parseProviderKind(provider_->currentData().toString().toStdString())
                .value_or(agent::ProviderKind::OpenAiChat);
        const agent::ProviderSettings defaults = agent::ProviderSettings::defaultsFor(kind);
        baseUrl_->setPlaceholderText(QString::fromStdString(defaults.effectiveBaseUrl()));
        apiKeyEnv_->setPlaceholderText(QString::fromStdString(defaults.apiKeyEnv));
        model_->setPlaceholderText(kind == agent::ProviderKind::AnthropicMessages
                                       ? QStringLiteral("claude-sonnet-4-20250514")
                                       : QStringLiteral("gpt-4.1"));
    };
    connect(provider_, &QComboBox::currentIndexChanged, this, placeholders);
    // Start from what was kept before.
    const AppSettings::AgentProvider kept = settings_.agentProvider();
    if (const int index = provider_->findData(kept.kind); index >= 0)
        provider_->setCurrentIndex(index);
    baseUrl_->setText(kept.baseUrl);
    model_->setText(kept.model);
    apiKeyEnv_->setText(kept.apiKeyEnv);
    placeholders();

    connect(test_, &QPushButton::clicked, this, [this] {
        if (model_->text().trimmed().isEmpty()) {
            connection_->setText(tr("Name the model first (the server's name for it)."));
            return;
        }
        test_->setEnabled(false);
        connection_->setText(
            tr("Asking %1 for a one-word reply…")
                .arg(QString::fromStdString(providerSettings().effectiveBaseUrl())));
        bridge_.requestConnectionCheck(providerSettings());
    });
    connect(use_, &QPushButton::clicked, this, [this] {
        if (model_->text().trimmed().isEmpty()) {
            connection_->setText(tr("Name the model first (the server's name for it)."));
            return;
        }
        const AppSettings::AgentProvider chosen = chosenProvider();
        settings_.setAgentProvider(chosen);
        connection_->setText(
            tr("Agents start with %1 (%2).").arg(chosen.model, provider_->currentText()));
        emit providerChosen(chosen);
    });
    return box;
}

void WelcomeDialog::fillTasks() {
    const QString previous = taskChoice_->currentData().toString();
    taskChoice_->clear();
    int firstWithSolution = -1;
    for (int row = 0; row < tasks_->rowCount(); ++row) {
        const QModelIndex index = tasks_->index(row, 0);
        const bool solved = index.data(TaskListModel::HasSolutionRole).toBool();
        taskChoice_->addItem(index.data(Qt::DisplayRole).toString() +
                                 (solved ? tr("  (with a solution)") : QString()),
                             index.data(TaskListModel::PathRole));
        if (solved && firstWithSolution < 0)
            firstWithSolution = row;
    }
    const int keep = taskChoice_->findData(previous);
    taskChoice_->setCurrentIndex(keep >= 0 ? keep : std::max(firstWithSolution, 0));
    openTask_->setEnabled(taskChoice_->count() > 0);
}

void WelcomeDialog::showReport(std::shared_ptr<const kwb::SystemReport> report) {
    while (QLayoutItem* item = machineRows_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    if (!report) {
        readiness_.clear();
        return;
    }
    readiness_ = kwb::machineReadiness(*report);
    int missing = 0;
    for (const kwb::ReadinessItem& item : readiness_) {
        missing += item.present ? 0 : 1;
        // ✔ or ✖, then the name and what was found; what is off and how to get it when missing.
        QString text = QStringLiteral("<b>%1 %2</b>: %3")
                           .arg(item.present ? QStringLiteral("\u2714") : QStringLiteral("\u2716"),
                                QString::fromStdString(item.name).toHtmlEscaped(),
                                QString::fromStdString(item.found).toHtmlEscaped());
        if (!item.present)
            text += tr("<br>Without it: %1<br>To get it: %2")
                        .arg(QString::fromStdString(item.withoutIt).toHtmlEscaped(),
                             QString::fromStdString(item.howToGetIt).toHtmlEscaped());
        QLabel* row = wrappedLabel(text, machineRows_->parentWidget());
        row->setTextFormat(Qt::RichText);
        row->setObjectName(QStringLiteral("readiness.") + QString::fromStdString(item.name));
        machineRows_->addWidget(row);
    }
    machineStatus_->setText(missing == 0 ? tr("Everything the workbench uses is here.")
                                         : tr("Missing here: %1 of %2. The workbench works "
                                              "without them, with less.")
                                               .arg(missing)
                                               .arg(readiness_.size()));
}

QString WelcomeDialog::machineText() const {
    QString text = machineStatus_->text();
    for (int i = 0; i < machineRows_->count(); ++i)
        if (auto* label = qobject_cast<QLabel*>(machineRows_->itemAt(i)->widget()))
            text += QLatin1Char('\n') + label->text();
    return text;
}

QString WelcomeDialog::connectionText() const {
    return connection_->text();
}

kwb::agent::ProviderSettings WelcomeDialog::providerSettings() const {
    const auto kind = agent::parseProviderKind(provider_->currentData().toString().toStdString())
                          .value_or(agent::ProviderKind::OpenAiChat);
    agent::ProviderSettings settings = agent::ProviderSettings::defaultsFor(kind);
    if (!baseUrl_->text().trimmed().isEmpty())
        settings.baseUrl = baseUrl_->text().trimmed().toStdString();
    if (!apiKeyEnv_->text().trimmed().isEmpty())
        settings.apiKeyEnv = apiKeyEnv_->text().trimmed().toStdString();
    settings.model = model_->text().trimmed().toStdString();
    return settings;
}

AppSettings::AgentProvider WelcomeDialog::chosenProvider() const {
    return {provider_->currentData().toString(), baseUrl_->text().trimmed(),
            model_->text().trimmed(), apiKeyEnv_->text().trimmed()};
}

void WelcomeDialog::showConnection(std::shared_ptr<const kwb::agent::ConnectionCheck> check) {
    test_->setEnabled(true);
    if (!check)
        return;
    if (check->ok)
        connection_->setText(
            tr("Connected: %1 answered \"%2\" in %3 s.")
                .arg(QString::fromStdString(check->model.empty() ? model_->text().toStdString()
                                                                 : check->model),
                     QString::fromStdString(check->reply).trimmed(),
                     QString::number(check->seconds, 'f', 1)));
    else
        connection_->setText(tr("Not connected: %1").arg(QString::fromStdString(check->error)));
}

} // namespace kwb::ui
