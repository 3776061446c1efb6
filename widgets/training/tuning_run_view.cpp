#include "widgets/training/tuning_run_view.h"

#include "agent/store/trajectory_store.h"
#include "engine/model/model_files.h"
#include "engine/system/python_environment.h"
#include "engine/tuning/tuning_space.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/runs/reward_histogram.h"
#include "widgets/runs/reward_plot.h"
#include "widgets/training/training_pane_parts.h"
#include "widgets/training/tuning_phase_model.h"
#include "widgets/training/tuning_run_controller.h"
#include "widgets/training/tuning_sample_model.h"

#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <map>

namespace kwb::ui {

namespace {

QLineEdit* pathEdit(const QString& placeholder, QWidget* parent) {
    auto* edit = new QLineEdit(parent);
    edit->setPlaceholderText(placeholder);
    edit->setClearButtonEnabled(true);
    return edit;
}

QHBoxLayout* withButton(QLineEdit* edit, QPushButton* button) {
    auto* row = new QHBoxLayout;
    row->addWidget(edit, 1);
    row->addWidget(button);
    return row;
}

} // namespace

TuningRunView::TuningRunView(EngineBridge& bridge, QWidget* parent)
    : QWidget(parent), bridge_(bridge), controller_(new TuningRunController(this)),
      phases_(new TuningPhaseModel(this)), samples_(new TuningSampleModel(this)) {
    config_ = pathEdit(tr("a kwb train tune settings file (JSON)"), this);
    // The bundled settings: two training spaces, two held out, twelve GRPO steps.
    const QString bundled = QDir(QString::fromStdString(bundledTuningDirectory()))
                                .filePath(QStringLiteral("default-run.json"));
    if (QFileInfo::exists(bundled))
        config_->setText(bundled);
    model_ = new QComboBox(this);
    model_->setEditable(true);
    for (const std::string& file : model::packagedModelFiles(projectVenvPythons()))
        model_->addItem(QString::fromStdString(file));
    model_->lineEdit()->setPlaceholderText(tr("the settings' model, or a GGUF file or folder"));
    model_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    model_->setMinimumContentsLength(12);
    folder_ = pathEdit(tr("a new folder under the state folder's training/"), this);
    auto* browseConfig = new QPushButton(tr("Browse…"), this);
    auto* openFolder = new QPushButton(tr("Open Run…"), this);
    openFolder->setToolTip(tr("Show a run's folder: one running now, or one that ran elsewhere."));
    auto* form = new QFormLayout;
    form->addRow(tr("Settings"), withButton(config_, browseConfig));
    form->addRow(tr("Model"), model_);
    form->addRow(tr("Run folder"), withButton(folder_, openFolder));

    startButton_ = new QPushButton(tr("Start tuning run"), this);
    stopButton_ = new QPushButton(tr("Stop"), this);
    stopButton_->setToolTip(tr("As Ctrl+C: every finished sample and step stays in the folder, "
                               "and the run can be resumed from its checkpoint."));
    resumeButton_ = new QPushButton(tr("Resume"), this);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(startButton_);
    buttons->addWidget(stopButton_);
    buttons->addWidget(resumeButton_);
    buttons->addStretch();
    status_ = new QLabel(tr("The local model learns a kernel's tunable settings from the "
                            "milestone reward of each one it tries (kwb train tune). Start a "
                            "run from its settings, or open a run's folder."),
                         this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    const auto plot = [this](const QString& title, const QString& y) {
        return stepPlot(this, title, y, tr("Curves appear as the training steps arrive."));
    };
    rewardPlot_ = plot(tr("Mean milestone reward of the step's samples"), tr("reward"));
    rewardPlot_->setMinimumYRange(AxisRange{-1, 3});
    histogram_ = new RewardHistogram(this);
    histogram_->setToolTip(tr("The milestone rewards of the latest training step's samples: -1 "
                              "failed or rejected, 1 correct, 2 faster than eager, 3 faster than "
                              "torch.compile as well."));
    histogram_->setEmptyText(
        tr("No training step yet: its samples' reward distribution appears here."));
    ratesPlot_ = plot(tr("Correct and faster than torch.compile"), tr("% of samples"));
    ratesPlot_->setMinimumYRange(AxisRange{0, 100});
    speedupPlot_ = plot(tr("Speed-up vs eager (geometric mean, correct samples)"), tr("x"));
    speedupPlot_->setReferenceLine(1.0);
    policyPlot_ = plot(tr("Policy update"), tr("loss, KL, entropy, clip"));
    throughputPlot_ = plot(tr("Training throughput"), tr("tokens/s"));
    auto* curves = new QWidget(this);
    auto* grid = new QGridLayout(curves);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(rewardPlot_, 0, 0);
    grid->addWidget(histogram_, 0, 1);
    grid->addWidget(ratesPlot_, 1, 0);
    grid->addWidget(speedupPlot_, 1, 1);
    grid->addWidget(policyPlot_, 2, 0);
    grid->addWidget(throughputPlot_, 2, 1);

    phaseTable_ = new QTableView(this);
    phaseTable_->setModel(phases_);
    phaseTable_->verticalHeader()->hide();
    phaseTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    sampleTable_ = new QTableView(this);
    sampleTable_->setModel(samples_);
    sampleTable_->verticalHeader()->hide();
    sampleTable_->horizontalHeader()->setStretchLastSection(true);
    auto* tabs = new QTabWidget(this);
    tabs->addTab(scrolled(this, curves), tr("Curves"));
    tabs->addTab(phaseTable_, tr("Before and after"));
    tabs->addTab(sampleTable_, tr("Samples"));

    // As in the Training tab: the settings scroll beside the results, so the dock fits a small
    // screen and never raises the bottom docks' minimum height with what it shows.
    auto* settings = new QWidget(this);
    auto* left = new QVBoxLayout(settings);
    left->addLayout(form);
    left->addLayout(buttons);
    left->addWidget(status_);
    left->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(settingsBesideResults(this, settings, tabs, 380));

    connect(browseConfig, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(
            this, tr("Tuning run settings"), config_->text(), tr("JSON (*.json);;All files (*)"));
        if (!file.isEmpty())
            config_->setText(file);
    });
    connect(openFolder, &QPushButton::clicked, this, [this] {
        const QString folder =
            QFileDialog::getExistingDirectory(this, tr("A tuning run's folder"), folder_->text());
        if (!folder.isEmpty())
            openRun(folder);
    });
    connect(startButton_, &QPushButton::clicked, this, &TuningRunView::start);
    connect(stopButton_, &QPushButton::clicked, controller_, &TuningRunController::stop);
    connect(resumeButton_, &QPushButton::clicked, this, &TuningRunView::resume);
    connect(controller_, &TuningRunController::runningChanged, this, &TuningRunView::updateButtons);
    connect(controller_, &TuningRunController::ended, this,
            [this](bool ok, const QString& message) {
                lastProcessMessage_ = ok ? message : tr("Failed: %1").arg(message);
                if (!following_.isEmpty())
                    bridge_.requestTuningRun(following_); // what it wrote last
                status_->setText(snapshot_ ? describe(*snapshot_) : lastProcessMessage_);
            });
    connect(&bridge_, &EngineBridge::tuningRunReady, this, [this](TuningRunSnapshotPtr run) {
        if (run && QString::fromStdString(run->folder) == following_)
            show(std::move(run));
    });
    // A running (or unfinished) run is read once a second; a finished one is left alone.
    poll_.setInterval(1000);
    connect(&poll_, &QTimer::timeout, this, [this] {
        if (following_.isEmpty() ||
            (!controller_->isRunning() && snapshot_ && snapshot_->finished)) {
            poll_.stop();
            return;
        }
        bridge_.requestTuningRun(following_);
    });
    updateButtons();
}

void TuningRunView::openRun(const QString& folder) {
    following_ = QFileInfo(folder).absoluteFilePath();
    folder_->setText(following_);
    snapshot_.reset();
    show(nullptr);
    bridge_.requestTuningRun(following_);
    poll_.start();
}

void TuningRunView::setStartPossible(bool possible, const QString& reason) {
    startPossible_ = possible;
    startImpossibleReason_ = reason;
    if (!possible && !snapshot_)
        status_->setText(reason);
    updateButtons();
}

bool TuningRunView::start() {
    if (!startPossible_) {
        status_->setText(startImpossibleReason_);
        return false;
    }
    const QString config = config_->text().trimmed();
    if (config.isEmpty() || !QFileInfo(config).isFile()) {
        status_->setText(config.isEmpty()
                             ? tr("Choose the run's settings file (kwb train tune --config).")
                             : tr("The settings file %1 does not exist.").arg(config));
        return false;
    }
    QString folder = folder_->text().trimmed();
    if (folder.isEmpty() || QFileInfo(folder).absoluteFilePath() == following_) {
        const QString state =
            QFileInfo(QString::fromStdString(agent::TrajectoryStore::defaultPath())).absolutePath();
        folder = QDir(state).filePath(
            QStringLiteral("training/tune-%1")
                .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
    }
    lastProcessMessage_.clear();
    if (!controller_->start(config, folder, model_->currentText().trimmed()))
        return false;
    openRun(folder);
    status_->setText(tr("Starting: the policy loads, then the first samples are scored…"));
    return true;
}

bool TuningRunView::resume() {
    if (following_.isEmpty() || !startPossible_)
        return false;
    lastProcessMessage_.clear();
    if (!controller_->resume(following_))
        return false;
    poll_.start();
    status_->setText(tr("Resuming from the checkpoint…"));
    return true;
}

void TuningRunView::show(TuningRunSnapshotPtr snapshot) {
    snapshot_ = std::move(snapshot);
    phases_->setSnapshot(snapshot_);
    samples_->setSnapshot(snapshot_);
    redrawCurves();
    if (snapshot_)
        status_->setText(describe(*snapshot_));
    updateButtons();
}

QString TuningRunView::describe(const TuningRunSnapshot& run) const {
    QStringList parts;
    if (!run.error.empty())
        parts << QString::fromStdString(run.error);
    const int stepsDone =
        static_cast<int>(std::count_if(run.steps.begin(), run.steps.end(),
                                       [](const TuningStepPoint& p) { return p.samples > 0; }));
    parts << (run.plannedSteps > 0
                  ? tr("%1 of %2 training steps").arg(stepsDone).arg(run.plannedSteps)
                  : tr("%1 training steps").arg(stepsDone));
    parts << tr("%n samples read", nullptr, static_cast<int>(run.samples.size()));
    for (auto it = run.steps.rbegin(); it != run.steps.rend(); ++it)
        if (it->samples > 0) {
            parts << tr("step %1: mean reward %2, %3 % correct, %4 % faster than torch.compile")
                         .arg(it->step)
                         .arg(it->meanReward, 0, 'f', 2)
                         .arg(it->passRate * 100, 0, 'f', 0)
                         .arg(it->fasterThanCompile * 100, 0, 'f', 0);
            break;
        }
    if (run.finished)
        parts << (run.stopped ? tr("stopped") : tr("finished"));
    else if (!controller_->isRunning())
        parts << tr("not running");
    if (run.skippedLines > 0)
        parts << tr("%n malformed line(s) passed over", nullptr, run.skippedLines);
    QString text = parts.join(QStringLiteral(" · "));
    if (!lastProcessMessage_.isEmpty())
        text += QStringLiteral("\n") + lastProcessMessage_;
    return text;
}

void TuningRunView::redrawCurves() {
    using C = TrainingCurveColours;
    PlotSeries reward{tr("mean reward"), C::reward(), {}};
    PlotSeries pass{tr("correct %"), C::loss(), {}};
    PlotSeries faster{tr("faster than compile %"), C::secondary(), {}};
    PlotSeries speedup{tr("speed-up vs eager"), C::reward(), {}};
    PlotSeries loss{tr("loss"), C::loss(), {}};
    PlotSeries kl{tr("KL"), C::kl(), {}};
    PlotSeries entropy{tr("entropy"), C::entropy(), {}};
    PlotSeries clip{tr("clip fraction"), C::clip(), {}};
    PlotSeries tokens{tr("tokens/s"), C::tokens(), {}};
    std::map<int, int> latest;
    if (snapshot_)
        for (const TuningStepPoint& p : snapshot_->steps) {
            if (p.samples == 0)
                continue; // its samples are in, its line is not yet
            const double x = p.step;
            const auto point = [&](double y, const QString& what) {
                return PlotPoint{x, y, 0, p.step,
                                 tr("step %1: %2 %3").arg(p.step).arg(y).arg(what)};
            };
            reward.points.push_back(point(p.meanReward, tr("mean reward")));
            pass.points.push_back(point(p.passRate * 100, tr("% correct")));
            faster.points.push_back(point(p.fasterThanCompile * 100, tr("% faster than compile")));
            if (p.speedupVsEager > 0)
                speedup.points.push_back(point(p.speedupVsEager, tr("x vs eager")));
            loss.points.push_back(point(p.loss, tr("loss")));
            kl.points.push_back(point(p.approximateKl, tr("KL")));
            entropy.points.push_back(point(p.entropy, tr("entropy")));
            clip.points.push_back(point(p.clipFraction, tr("clip fraction")));
            tokens.points.push_back(point(p.tokensPerSecond, tr("tokens/s")));
        }
    // The distribution of the newest step whose samples are in (its line may not be yet).
    if (snapshot_)
        for (auto it = snapshot_->steps.rbegin(); it != snapshot_->steps.rend(); ++it)
            if (!it->rewards.empty()) {
                for (int r : it->rewards)
                    ++latest[r];
                break;
            }
    rewardPlot_->setSeries({reward});
    ratesPlot_->setSeries({pass, faster});
    speedupPlot_->setSeries({speedup});
    policyPlot_->setSeries({loss, kl, entropy, clip});
    throughputPlot_->setSeries({tokens});
    histogram_->setCounts(latest);
}

void TuningRunView::updateButtons() {
    const bool running = controller_->isRunning();
    startButton_->setEnabled(!running && startPossible_);
    stopButton_->setEnabled(running);
    resumeButton_->setEnabled(!running && startPossible_ && snapshot_ && snapshot_->checkpoint &&
                              (!snapshot_->finished || snapshot_->stopped));
    const QString why = startPossible_ ? QString() : startImpossibleReason_;
    startButton_->setToolTip(why);
    resumeButton_->setToolTip(why);
}

} // namespace kwb::ui
