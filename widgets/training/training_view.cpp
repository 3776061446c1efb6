#include "widgets/training/training_view.h"

#include "engine/model/model_files.h"
#include "engine/system/python_environment.h"
#include "widgets/rollout/training_controller.h"
#include "widgets/rollout/training_step_model.h"
#include "widgets/runs/reward_plot.h"
#include "widgets/training/training_pane_parts.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace kwb::ui {

TrainingView::TrainingView(QString storePath, QWidget* parent)
    : QWidget(parent), storePath_(std::move(storePath)), controller_(new TrainingController(this)),
      steps_(new TrainingStepModel(this)) {
    auto* form = new QFormLayout;
    algorithm_ = new QComboBox(this);
    algorithm_->addItem(tr("RFT: fine-tune on the successful episodes"), QStringLiteral("rft"));
    algorithm_->addItem(tr("Value pretraining of PPO's critic"), QStringLiteral("value"));
    algorithm_->addItem(tr("PPO"), QStringLiteral("ppo"));
    algorithm_->addItem(tr("GRPO"), QStringLiteral("grpo"));
    model_ = new QComboBox(this);
    model_->setEditable(true);
    for (const std::string& file : model::packagedModelFiles(projectVenvPythons()))
        model_->addItem(QString::fromStdString(file));
    model_->lineEdit()->setPlaceholderText(tr("a GGUF file or Hugging Face folder"));
    run_ = new QSpinBox(this);
    run_->setRange(0, 1 << 30);
    run_->setSpecialValueText(tr("choose a rollout run"));
    out_ = new QLineEdit(this);
    out_->setPlaceholderText(tr("a new folder under the state folder's training/"));
    stepCount_ = new QSpinBox(this);
    stepCount_->setRange(0, 1000000);
    stepCount_->setSpecialValueText(tr("one pass over the episodes"));
    batchSize_ = new QSpinBox(this);
    batchSize_->setRange(1, 4096);
    batchSize_->setValue(4);
    learningRate_ = new QDoubleSpinBox(this);
    learningRate_->setDecimals(6);
    learningRate_->setRange(1e-6, 1.0);
    learningRate_->setSingleStep(1e-5);
    learningRate_->setValue(1e-4);
    device_ = new QComboBox(this);
    device_->addItem(tr("Auto (a GPU when there is one)"), QStringLiteral("auto"));
    device_->addItem(tr("CPU"), QStringLiteral("cpu"));
    device_->addItem(tr("CUDA"), QStringLiteral("cuda"));
    checkpointing_ = new QCheckBox(tr("Gradient checkpointing"), this);
    checkpointing_->setToolTip(tr("Keep one layer's activations and compute each layer again in "
                                  "the backward pass: long agent episodes in far less memory, for "
                                  "about a third more time."));
    checkpointing_->setChecked(true);
    // Long model paths and algorithm names must not widen the dock.
    for (QComboBox* box : {algorithm_, model_, device_}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(12);
    }
    form->addRow(tr("Algorithm"), algorithm_);
    form->addRow(tr("Model"), model_);
    form->addRow(tr("Rollout run"), run_);
    form->addRow(tr("Run folder"), out_);
    form->addRow(tr("Steps"), stepCount_);
    form->addRow(tr("Episodes per step"), batchSize_);
    form->addRow(tr("Learning rate"), learningRate_);
    form->addRow(tr("Device"), device_);
    form->addRow(QString(), checkpointing_);

    startButton_ = new QPushButton(tr("Start training"), this);
    stopButton_ = new QPushButton(tr("Stop"), this);
    stopButton_->setEnabled(false);
    status_ = new QLabel(tr("Train the local model on a rollout run's episodes."), this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(startButton_);
    buttons->addWidget(stopButton_);
    buttons->addStretch();

    const auto plot = [this](const QString& title, const QString& y) {
        return stepPlot(this, title, y, tr("Curves appear as the steps arrive."));
    };
    lossPlot_ = plot(tr("Loss"), tr("loss"));
    rewardPlot_ = plot(tr("Mean reward of the step's episodes"), tr("reward"));
    policyPlot_ = plot(tr("Policy change"), tr("KL, entropy, clip"));
    throughputPlot_ = plot(tr("Throughput"), tr("tokens/s"));
    auto* curves = new QWidget(this);
    auto* grid = new QGridLayout(curves);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(lossPlot_, 0, 0);
    grid->addWidget(rewardPlot_, 0, 1);
    grid->addWidget(policyPlot_, 1, 0);
    grid->addWidget(throughputPlot_, 1, 1);

    table_ = new QTableView(this);
    table_->setModel(steps_);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

    // The settings scroll and the curves and steps share tabs, so the dock fits a small screen
    // and never grows from what arrives.
    auto* settings = new QWidget(this);
    auto* left = new QVBoxLayout(settings);
    left->addLayout(form);
    left->addLayout(buttons);
    left->addWidget(status_);
    left->addStretch();
    auto* right = new QTabWidget(this);
    right->addTab(scrolled(this, curves), tr("Curves"));
    right->addTab(table_, tr("Steps"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(settingsBesideResults(this, settings, right, 360));

    connect(startButton_, &QPushButton::clicked, this, &TrainingView::start);
    connect(stopButton_, &QPushButton::clicked, controller_, &TrainingController::stop);
    connect(controller_, &TrainingController::started, this,
            [this](const QString& description) { status_->setText(description); });
    connect(controller_, &TrainingController::stepTaken, this, &TrainingView::addStep);
    connect(controller_, &TrainingController::ended, this,
            [this](const QString& status, const QString& message) {
                status_->setText(status == QLatin1String("stopped") ? tr("Stopped: %1").arg(message)
                                                                    : tr("Done: %1").arg(message));
            });
    connect(controller_, &TrainingController::failed, this,
            [this](const QString& message) { status_->setText(tr("Failed: %1").arg(message)); });
    connect(controller_, &TrainingController::runningChanged, this, &TrainingView::setRunning);
}

QString TrainingView::defaultOutFolder() const {
    const QString state = QFileInfo(storePath_).absolutePath();
    return QDir(state).filePath(
        QStringLiteral("training/%1-run%2-%3")
            .arg(algorithm_->currentData().toString())
            .arg(run_->value())
            .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
}

std::optional<agent::EpisodeTrainingConfig> TrainingView::config(QString* problem) const {
    const QString model = model_->currentText().trimmed();
    if (model.isEmpty() || !QFileInfo::exists(model)) {
        *problem = model.isEmpty() ? tr("Choose the model to train.")
                                   : tr("The model %1 does not exist.").arg(model);
        return std::nullopt;
    }
    if (run_->value() <= 0) {
        *problem = tr("Choose the rollout run whose episodes it trains on.");
        return std::nullopt;
    }
    nlohmann::json settings = {{"model", model.toStdString()},
                               {"run", run_->value()},
                               {"store", storePath_.toStdString()},
                               {"device", device_->currentData().toString().toStdString()},
                               {"batch_size", batchSize_->value()},
                               {"learning_rate", learningRate_->value()},
                               {"gradient_checkpointing", checkpointing_->isChecked()}};
    settings["out"] =
        (out_->text().trimmed().isEmpty() ? defaultOutFolder() : out_->text().trimmed())
            .toStdString();
    if (stepCount_->value() > 0)
        settings["steps"] = stepCount_->value();
    const auto algorithm =
        agent::parseEpisodeTrainingAlgorithm(algorithm_->currentData().toString().toStdString());
    std::string error;
    auto config = agent::EpisodeTrainingConfig::fromJson(settings, *algorithm, &error);
    if (!config)
        *problem = QString::fromStdString(error);
    return config;
}

bool TrainingView::start() {
    QString problem;
    const auto settings = config(&problem);
    if (!settings) {
        status_->setText(problem);
        return false;
    }
    steps_->reset();
    redrawCurves();
    status_->setText(
        tr("Preparing %1 on run %2 in %3…")
            .arg(QString::fromLatin1(agent::episodeTrainingAlgorithmName(settings->algorithm)))
            .arg(run_->value())
            .arg(QString::fromStdString(settings->out)));
    return controller_->start(*settings);
}

void TrainingView::addStep(const TrainingStepRow& row) {
    steps_->append(row);
    redrawCurves();
}

void TrainingView::redrawCurves() {
    using C = TrainingCurveColours;
    PlotSeries loss{tr("loss"), C::loss(), {}};
    PlotSeries valueLoss{tr("value loss"), C::secondary(), {}};
    PlotSeries reward{tr("reward"), C::reward(), {}};
    PlotSeries kl{tr("KL"), C::kl(), {}};
    PlotSeries entropy{tr("entropy"), C::entropy(), {}};
    PlotSeries clip{tr("clip fraction"), C::clip(), {}};
    PlotSeries tokens{tr("tokens/s"), C::tokens(), {}};
    // Steps are numbered per phase by the trainer; the curves number them in arrival order.
    double x = 0;
    for (const TrainingStepRow& r : steps_->steps()) {
        x += 1;
        const auto point = [&](double y) {
            return PlotPoint{x, y, 0, 0, tr("%1 step %2: %3").arg(r.phase).arg(r.step).arg(y)};
        };
        if (r.phase == QLatin1String("value")) {
            valueLoss.points.push_back(point(r.valueLoss));
        } else if (r.phase == QLatin1String("supervised")) {
            loss.points.push_back(point(r.loss));
            entropy.points.push_back(point(r.entropy));
        } else {
            loss.points.push_back(point(r.loss));
            reward.points.push_back(point(r.meanReward));
            kl.points.push_back(point(r.approximateKl));
            entropy.points.push_back(point(r.entropy));
            clip.points.push_back(point(r.clipFraction));
            if (r.valueLoss != 0)
                valueLoss.points.push_back(point(r.valueLoss));
        }
        tokens.points.push_back(point(r.tokensPerSecond));
    }
    lossPlot_->setSeries({loss, valueLoss});
    rewardPlot_->setSeries({reward});
    policyPlot_->setSeries({kl, entropy, clip});
    throughputPlot_->setSeries({tokens});
}

void TrainingView::setRunning(bool running) {
    startButton_->setEnabled(!running);
    stopButton_->setEnabled(running);
}

} // namespace kwb::ui
