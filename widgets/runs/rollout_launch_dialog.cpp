#include "widgets/runs/rollout_launch_dialog.h"

#include "engine/evaluation/evaluation_profile.h"
#include "engine/model/model_files.h"
#include "engine/system/python_environment.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace kwb::ui {

RolloutLaunchDialog::RolloutLaunchDialog(const agent::ProviderSettings& provider,
                                         const QString& python, QWidget* parent)
    : QDialog(parent), python_(python) {
    setWindowTitle(tr("New Rollout"));
    auto* form = new QFormLayout;

    taskSet_ = new QLineEdit(this);
    taskSet_->setPlaceholderText(tr("KernelBench checkout, folder of task files, or Ops-6K rows"));
    auto* folder = new QPushButton(tr("Folder…"), this);
    auto* file = new QPushButton(tr("File…"), this);
    auto* taskRow = new QHBoxLayout;
    taskRow->addWidget(taskSet_, 1);
    taskRow->addWidget(folder);
    taskRow->addWidget(file);
    form->addRow(tr("Task set"), taskRow);
    connect(folder, &QPushButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Task Set Folder"), taskSet_->text());
        if (!dir.isEmpty())
            taskSet_->setText(dir);
    });
    connect(file, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Task Rows"), taskSet_->text(),
            tr("Ops-6K rows (*.jsonl *.json *.parquet);;All files (*)"));
        if (!path.isEmpty())
            taskSet_->setText(path);
    });

    const auto spin = [this](int low, int high, int value, const QString& special = {}) {
        auto* box = new QSpinBox(this);
        box->setRange(low, high);
        box->setValue(value);
        if (!special.isEmpty())
            box->setSpecialValueText(special);
        return box;
    };
    limit_ = spin(0, 100000, 0, tr("all tasks"));
    episodesPerTask_ = spin(1, 256, 2);
    concurrency_ = spin(1, 64, 4);
    maxTurns_ = spin(1, 1000, 40);
    form->addRow(tr("Tasks"), limit_);
    form->addRow(tr("Episodes per task (K)"), episodesPerTask_);
    form->addRow(tr("Concurrent episodes (N)"), concurrency_);
    form->addRow(tr("Turns per episode"), maxTurns_);

    provider_ = new QComboBox(this);
    provider_->addItem(tr("OpenAI-compatible"), int(agent::ProviderKind::OpenAiChat));
    provider_->addItem(tr("Anthropic Messages"), int(agent::ProviderKind::AnthropicMessages));
    provider_->addItem(tr("Local model (kwb-model, no server)"),
                       int(agent::ProviderKind::LocalModel));
    provider_->setCurrentIndex(provider_->findData(int(provider.kind)));
    baseUrl_ = new QLineEdit(QString::fromStdString(provider.baseUrl), this);
    baseUrl_->setPlaceholderText(tr("the official endpoint"));
    model_ = new QLineEdit(QString::fromStdString(provider.model), this);
    apiKeyEnv_ = new QLineEdit(QString::fromStdString(provider.apiKeyEnv), this);
    apiKeyEnv_->setToolTip(tr("The environment variable holding the key; keys are never stored "
                              "with a run."));
    maxTokens_ = spin(0, 1 << 20, 0, tr("the provider's default"));
    maxTokens_->setToolTip(tr("The token limit of each reply. A local model on a CPU needs a "
                              "small one (a few hundred) to answer in seconds."));
    form->addRow(tr("Provider"), provider_);
    form->addRow(tr("Base URL"), baseUrl_);
    form->addRow(tr("Model"), model_);
    form->addRow(tr("API key variable"), apiKeyEnv_);
    form->addRow(tr("Tokens per reply"), maxTokens_);
    // A local model has no endpoint and no key; its "model" is a file, and the one the project's
    // Python environment ships is offered.
    const auto providerChanged = [this] {
        const bool local = provider_->currentData().toInt() == int(agent::ProviderKind::LocalModel);
        baseUrl_->setEnabled(!local);
        apiKeyEnv_->setEnabled(!local);
        model_->setPlaceholderText(local ? tr("a GGUF file or Hugging Face folder")
                                         : tr("the server's model name"));
        if (local && model_->text().trimmed().isEmpty()) {
            const auto packaged = model::packagedModelFiles(projectVenvPythons());
            if (!packaged.empty())
                model_->setText(QString::fromStdString(packaged.front()));
        }
        updateProblem();
    };
    connect(provider_, &QComboBox::currentIndexChanged, this, providerChanged);

    device_ = new QComboBox(this);
    device_->addItem(tr("Auto (a GPU when there is one)"), QStringLiteral("auto"));
    device_->addItem(tr("CPU"), QStringLiteral("cpu"));
    device_->addItem(tr("CUDA"), QStringLiteral("cuda"));
    profile_ = new QComboBox(this);
    profile_->addItem(tr("rl (rollout throughput)"), QStringLiteral("rl"));
    profile_->addItem(tr("cuda-agent (CUDA Agent's rules)"), QStringLiteral("cuda-agent"));
    profile_->addItem(tr("kernelbench (KernelBench's rules)"), QStringLiteral("kernelbench"));
    form->addRow(tr("Device"), device_);
    form->addRow(tr("Evaluation profile"), profile_);

    problem_ = new QLabel(this);
    problem_->setWordWrap(true);
    buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons_->button(QDialogButtonBox::Ok)->setText(tr("Start"));
    connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(problem_);
    layout->addWidget(buttons_);
    connect(taskSet_, &QLineEdit::textChanged, this, &RolloutLaunchDialog::updateProblem);
    connect(model_, &QLineEdit::textChanged, this, &RolloutLaunchDialog::updateProblem);
    providerChanged();
}

void RolloutLaunchDialog::setTaskSet(const QString& path) {
    taskSet_->setText(path);
}

QString RolloutLaunchDialog::problem() const {
    const QString path = taskSet_->text().trimmed();
    if (path.isEmpty())
        return tr("Choose a task set.");
    if (!QFileInfo::exists(path))
        return tr("%1 does not exist.").arg(path);
    if (model_->text().trimmed().isEmpty())
        return tr("Name the model.");
    if (provider_->currentData().toInt() == int(agent::ProviderKind::LocalModel) &&
        !QFileInfo::exists(model_->text().trimmed()))
        return tr("The model %1 does not exist.").arg(model_->text().trimmed());
    return {};
}

void RolloutLaunchDialog::updateProblem() {
    const QString problem = this->problem();
    problem_->setText(problem);
    problem_->setVisible(!problem.isEmpty());
    buttons_->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
}

agent::RolloutConfig RolloutLaunchDialog::config() const {
    agent::RolloutConfig c;
    c.taskSetPath = taskSet_->text().trimmed().toStdString();
    c.limit = static_cast<std::size_t>(limit_->value());
    c.episodesPerTask = episodesPerTask_->value();
    c.concurrency = concurrency_->value();
    c.maxTurns = maxTurns_->value();
    const auto kind = static_cast<agent::ProviderKind>(provider_->currentData().toInt());
    c.provider = agent::ProviderSettings::defaultsFor(kind);
    // A local model's form leaves the endpoint and key fields as they were, unused.
    const bool remote = kind != agent::ProviderKind::LocalModel;
    if (remote && !baseUrl_->text().trimmed().isEmpty())
        c.provider.baseUrl = baseUrl_->text().trimmed().toStdString();
    if (remote && !apiKeyEnv_->text().trimmed().isEmpty())
        c.provider.apiKeyEnv = apiKeyEnv_->text().trimmed().toStdString();
    c.provider.model = model_->text().trimmed().toStdString();
    if (maxTokens_->value() > 0)
        c.maxTokens = maxTokens_->value();
    c.python = python_.toStdString();
    // The profile first: it resets what it decides, and the device is the user's choice.
    if (const auto profile =
            evaluationProfileFrom(profile_->currentData().toString().toStdString()))
        applyEvaluationProfile(c.evaluation, *profile);
    c.evaluation.device = deviceChoiceFrom(device_->currentData().toString().toStdString());
    return c;
}

} // namespace kwb::ui
