// The Training view: its steps table (checked by Qt's model tester), the settings its form makes
// (or why it cannot yet), and a run followed live from start to end and stopped half-way. The
// trainer here is a stand-in for kwb-model that writes step lines as the real one does;
// model.train_rl runs the real one.
// The Kernel Tuning view: its phase table (model tester), a `kwb train tune` run started,
// followed through its folder as it grows, stopped and resumed, and runs that fail or cannot
// start. The kwb there is a stand-in that writes the run's files as the real one does
// (tests/data/fake_kwb_tune.sh; TuningRun.* runs the real run, TuningRunReaderTest the reading).
#include "widgets/core/engine_bridge.h"
#include "widgets/rollout/training_controller.h"
#include "widgets/rollout/training_step_model.h"
#include "widgets/runs/reward_histogram.h"
#include "widgets/runs/reward_plot.h"
#include "widgets/training/training_view.h"
#include "widgets/training/tuning_phase_model.h"
#include "widgets/training/tuning_run_controller.h"
#include "widgets/training/tuning_run_view.h"
#include "widgets/training/tuning_sample_model.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

namespace kwb::ui {
namespace {

// A kwb-model stand-in: the start line and three steps (two of value pretraining, one policy
// step) appended to --steps-out, then done, or a long pause after the first step when
// FAKE_TRAINER_PAUSE is set.
const char* kFakeTrainer = R"(#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --steps-out ] && out=$2; shift; done
echo '{"event":"start","algorithm":"ppo","conversations":4,"model":"fake","trainable_parameters":12}' >> "$out"
echo '{"event":"step","phase":"value","step":1,"loss":0.9,"value_loss":0.9,"tokens_per_second":100}' >> "$out"
[ -n "$FAKE_TRAINER_PAUSE" ] && sleep 60
echo '{"event":"step","phase":"value","step":2,"loss":0.5,"value_loss":0.5,"tokens_per_second":110}' >> "$out"
echo '{"event":"step","phase":"policy","step":1,"loss":-0.1,"mean_reward":1.5,"approximate_kl":0.002,"entropy":2.1,"clip_fraction":0.05,"tokens_per_second":120}' >> "$out"
echo '{"event":"done"}' >> "$out"
)";

} // namespace

class TestTrainingView : public QObject {
    Q_OBJECT
private slots:
    void theStepsModelShowsEachStepAndLeavesBlankWhatAPhaseLacks() {
        TrainingStepModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto value = trainingStepFromJson({{"event", "step"},
                                                 {"phase", "value"},
                                                 {"step", 1},
                                                 {"loss", 0.5},
                                                 {"value_loss", 0.5}});
        QVERIFY(value);
        model.append(*value);
        const auto policy = trainingStepFromJson({{"event", "step"},
                                                  {"step", 1},
                                                  {"loss", -0.25},
                                                  {"mean_reward", 2.0},
                                                  {"approximate_kl", 0.01}});
        QVERIFY(policy);
        model.append(*policy);
        QVERIFY(!trainingStepFromJson({{"event", "start"}}));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, TrainingStepModel::PhaseColumn).data().toString(),
                 QStringLiteral("value"));
        QVERIFY(!model.index(0, TrainingStepModel::RewardColumn).data().isValid());
        QCOMPARE(model.index(1, TrainingStepModel::PhaseColumn).data().toString(),
                 QStringLiteral("policy"));
        QCOMPARE(model.index(1, TrainingStepModel::RewardColumn).data().toString(),
                 QStringLiteral("2.000"));
        QCOMPARE(model.index(1, TrainingStepModel::LossColumn).data().toString(),
                 QStringLiteral("-0.2500"));
        // A supervised (RFT) step has a loss and an entropy, no reward, ratio or clip.
        const auto supervised = trainingStepFromJson({{"event", "step"},
                                                      {"phase", "supervised"},
                                                      {"step", 1},
                                                      {"loss", 1.25},
                                                      {"entropy", 1.5}});
        QVERIFY(supervised);
        model.append(*supervised);
        QVERIFY(!model.index(2, TrainingStepModel::RewardColumn).data().isValid());
        QVERIFY(!model.index(2, TrainingStepModel::ClipColumn).data().isValid());
        QCOMPARE(model.index(2, TrainingStepModel::EntropyColumn).data().toString(),
                 QStringLiteral("1.500"));
        QVERIFY2(!model.index(0, TrainingStepModel::EntropyColumn).data().isValid(),
                 "the critic's pretraining has no entropy of its own");
        model.reset();
        QCOMPARE(model.rowCount(), 0);
    }

    void theFormSaysWhatIsMissingAndMakesTheSettings() {
        QTemporaryDir dir;
        TrainingView view(dir.filePath(QStringLiteral("trajectories.db")));
        QString problem;
        view.modelBox()->setEditText(QString());
        QVERIFY(!view.config(&problem));
        QVERIFY(problem.contains(QLatin1String("model")));
        view.modelBox()->setEditText(dir.filePath(QStringLiteral("missing.gguf")));
        QVERIFY(!view.config(&problem));
        QVERIFY(problem.contains(QLatin1String("does not exist")));
        const QString modelFile = dir.filePath(QStringLiteral("model.gguf"));
        QFile(modelFile).open(QIODevice::WriteOnly);
        view.modelBox()->setEditText(modelFile);
        QVERIFY(!view.config(&problem));
        QVERIFY(problem.contains(QLatin1String("rollout run")));
        QVERIFY(!view.start());
        QCOMPARE(view.statusLabel()->text(), problem);

        view.runBox()->setValue(3);
        view.algorithmBox()->setCurrentIndex(view.algorithmBox()->findData(QStringLiteral("ppo")));
        view.stepsBox()->setValue(5);
        const auto config = view.config(&problem);
        QVERIFY2(config, qPrintable(problem));
        QVERIFY(config->algorithm == agent::EpisodeTrainingAlgorithm::Ppo);
        QCOMPARE(*config->run, std::int64_t(3));
        QCOMPARE(config->model, modelFile.toStdString());
        QCOMPARE(config->store, dir.filePath(QStringLiteral("trajectories.db")).toStdString());
        QVERIFY(QString::fromStdString(config->out)
                    .startsWith(dir.filePath(QStringLiteral("training/ppo-run3-"))));
        QCOMPARE(config->trainer.value("steps", 0), 5);
        QCOMPARE(config->trainer.value("gradient_checkpointing", false), true);
        view.checkpointingBox()->setChecked(false);
        view.outEdit()->setText(dir.filePath(QStringLiteral("mine")));
        const auto second = view.config(&problem);
        QVERIFY(second);
        QCOMPARE(second->trainer.value("gradient_checkpointing", true), false);
        QCOMPARE(second->out, dir.filePath(QStringLiteral("mine")).toStdString());
    }

    void aRunIsFollowedLiveToItsEnd() {
        QTemporaryDir dir;
        TrainingView view(dir.filePath(QStringLiteral("trajectories.db")));
        QSignalSpy ended(view.controller(), &TrainingController::ended);
        QVERIFY(view.controller()->start(configIn(dir)));
        QVERIFY(ended.wait(30000));
        QCOMPARE(ended.at(0).at(0).toString(), QStringLiteral("finished"));
        QCOMPARE(view.steps()->rowCount(), 3);
        QVERIFY(view.statusLabel()->text().startsWith(QLatin1String("Done: 3 steps on 2")));
        // Value steps draw the critic's loss; the policy step the rest.
        QCOMPARE(view.lossPlot()->pointCount(), 3);
        QCOMPARE(view.rewardPlot()->pointCount(), 1);
        QCOMPARE(view.policyPlot()->pointCount(), 3);
        QCOMPARE(view.throughputPlot()->pointCount(), 3);
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("run/summary.json"))));
        QVERIFY(!view.controller()->isRunning());
    }

    void aStopEndsTheTrainerAndKeepsItsSteps() {
        QTemporaryDir dir;
        TrainingView view(dir.filePath(QStringLiteral("trajectories.db")));
        qputenv("FAKE_TRAINER_PAUSE", "1");
        QSignalSpy stepTaken(view.controller(), &TrainingController::stepTaken);
        QSignalSpy ended(view.controller(), &TrainingController::ended);
        QVERIFY(view.controller()->start(configIn(dir)));
        QVERIFY(stepTaken.wait(30000));
        QVERIFY2(!view.controller()->start(configIn(dir)), "one run at a time");
        view.controller()->stop();
        // The stand-in pauses for a minute: ending well before shows the stop reached it.
        QVERIFY(ended.wait(30000));
        qunsetenv("FAKE_TRAINER_PAUSE");
        QCOMPARE(ended.at(0).at(0).toString(), QStringLiteral("stopped"));
        QCOMPARE(view.steps()->rowCount(), 1);
        QVERIFY(view.statusLabel()->text().startsWith(QLatin1String("Stopped")));
    }

    void theTuningPhaseTableListsTrainingSpacesFirstInTheRunsOrder() {
        TuningPhaseModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto run = std::make_shared<TuningRunSnapshot>();
        const auto phase = [](std::string space, bool heldOut, std::string name, double reward) {
            TuningPhaseFigures f;
            f.space = std::move(space);
            f.heldOut = heldOut;
            f.phase = std::move(name);
            f.samples = 4;
            f.meanReward = reward;
            f.passRate = 0.75;
            f.speedupVsEager = reward > 1 ? 1.25 : 0;
            return f;
        };
        run->phases = {phase("07_scale_residual_add", true, "start", 1),
                       phase("01_gelu", false, "final", 2), phase("01_gelu", false, "random", 1),
                       phase("01_gelu", false, "start", 1.5)};
        model.setSnapshot(run);
        QCOMPARE(model.rowCount(), 4);
        const auto cell = [&](int row, int column) {
            return model.index(row, column).data().toString();
        };
        QCOMPARE(cell(0, TuningPhaseModel::PhaseColumn), QStringLiteral("before training"));
        QCOMPARE(cell(1, TuningPhaseModel::PhaseColumn), QStringLiteral("random choice"));
        QCOMPARE(cell(2, TuningPhaseModel::PhaseColumn), QStringLiteral("after training"));
        QCOMPARE(cell(2, TuningPhaseModel::MeanRewardColumn), QStringLiteral("2.00"));
        QCOMPARE(cell(2, TuningPhaseModel::SpeedupColumn), QStringLiteral("1.25x"));
        QCOMPARE(cell(1, TuningPhaseModel::SpeedupColumn),
                 QStringLiteral("-")); // no correct sample
        QCOMPARE(cell(3, TuningPhaseModel::HeldOutColumn), QStringLiteral("held out"));
        QCOMPARE(cell(3, TuningPhaseModel::PassRateColumn), QStringLiteral("75 %"));
        model.setSnapshot(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void aTuningRunIsStartedFollowedStoppedAndResumed() {
        QTemporaryDir dir;
        useFakeKwb(dir);
        EngineBridge bridge;
        TuningRunView view(bridge);
        // The bundled settings are offered; a file that is not there is refused before kwb runs.
        QVERIFY(view.configEdit()->text().endsWith(QLatin1String("tuning/default-run.json")));
        QVERIFY(QFileInfo::exists(view.configEdit()->text()));
        view.configEdit()->setText(dir.filePath(QStringLiteral("missing.json")));
        QVERIFY(!view.start());
        QVERIFY(view.statusLabel()->text().contains(QLatin1String("does not exist")));
        const QString settings = dir.filePath(QStringLiteral("tune.json"));
        QFile(settings).open(QIODevice::WriteOnly);
        view.configEdit()->setText(settings);
        const QString folder = dir.filePath(QStringLiteral("run"));
        view.folderEdit()->setText(folder);
        view.modelBox()->setEditText(QStringLiteral("/models/mine.gguf"));
        qputenv("FAKE_TUNE_PAUSE", "1");
        QVERIFY(view.start());
        QVERIFY(!view.startButton()->isEnabled());
        QVERIFY(view.stopButton()->isEnabled());
        QVERIFY(view.histogram()->emptyText().contains(QLatin1String("training step")));
        // Both steps arrive while it runs, each with its figures and its samples' rewards.
        QTRY_VERIFY_WITH_TIMEOUT(view.snapshot() && view.snapshot()->steps.size() == 2, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(view.rewardPlot()->pointCount(), 2, 5000);
        QCOMPARE(view.ratesPlot()->pointCount(), 4);
        QCOMPARE(view.speedupPlot()->pointCount(), 2);
        QCOMPARE(view.policyPlot()->pointCount(), 8);
        QCOMPARE(view.throughputPlot()->pointCount(), 2);
        QCOMPARE(view.histogram()->counts(), (std::map<int, int>{{2, 1}, {3, 1}}));
        QCOMPARE(view.phases()->rowCount(), 3); // start and random on gelu, start held out
        // Every scored action, newest first.
        QAbstractItemModelTester samplesTester(
            view.samples(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(view.samples()->rowCount(), 7);
        const auto sample = [&](int row, int column) {
            return view.samples()->index(row, column).data().toString();
        };
        QCOMPARE(sample(0, TuningSampleModel::StepColumn), QStringLiteral("2"));
        QCOMPARE(sample(0, TuningSampleModel::ActionColumn), QStringLiteral("threads=512"));
        QCOMPARE(sample(0, TuningSampleModel::SpeedupColumn), QStringLiteral("1.20x"));
        QCOMPARE(sample(6, TuningSampleModel::PhaseColumn), QStringLiteral("start"));
        QVERIFY2(view.statusLabel()->text().contains(QLatin1String("2 of 3 training steps")),
                 qPrintable(view.statusLabel()->text()));
        QVERIFY(!view.resumeButton()->isEnabled());
        QFile arguments(folder + QStringLiteral("/arguments.txt"));
        QVERIFY(arguments.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(arguments.readAll()).trimmed(),
                 QStringLiteral("train tune --config %1 --out %2 --model /models/mine.gguf")
                     .arg(settings, folder));

        QSignalSpy ended(view.controller(), &TuningRunController::ended);
        view.stopButton()->click();
        QVERIFY(ended.wait(20000)); // the stand-in would sleep a minute: the stop reached it
        qunsetenv("FAKE_TUNE_PAUSE");
        QVERIFY(ended.at(0).at(0).toBool());
        QTRY_VERIFY_WITH_TIMEOUT(view.snapshot()->finished && view.snapshot()->stopped, 10000);
        QVERIFY(view.statusLabel()->text().contains(QLatin1String("stopped")));
        QVERIFY(view.resumeButton()->isEnabled());
        QVERIFY(view.startButton()->isEnabled());

        // Resumed: the third step and the final phase come into the same view.
        view.resumeButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(view.snapshot()->steps.size() == 3 && view.snapshot()->finished &&
                                     !view.snapshot()->stopped,
                                 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!view.controller()->isRunning(), 10000);
        QCOMPARE(view.histogram()->counts(), (std::map<int, int>{{3, 2}}));
        QCOMPARE(view.phases()->rowCount(), 4);
        QTRY_VERIFY_WITH_TIMEOUT(view.statusLabel()->text().contains(QLatin1String("finished")),
                                 5000);
        QVERIFY(!view.resumeButton()->isEnabled());

        // The same folder opened again, as a finished run from elsewhere would be.
        TuningRunView other(bridge);
        other.openRun(folder);
        QTRY_VERIFY_WITH_TIMEOUT(other.snapshot() && other.snapshot()->steps.size() == 3, 10000);
    }

    void aTuningRunThatFailsOrCannotStartSaysWhy() {
        QTemporaryDir dir;
        useFakeKwb(dir);
        EngineBridge bridge;
        TuningRunView view(bridge);
        // Without a GPU: no start, and the reason where the user looks.
        view.setStartPossible(false, QStringLiteral("no GPU here"));
        QVERIFY(!view.startButton()->isEnabled());
        QCOMPARE(view.startButton()->toolTip(), QStringLiteral("no GPU here"));
        QCOMPARE(view.statusLabel()->text(), QStringLiteral("no GPU here"));
        QVERIFY(!view.start());
        QVERIFY(!view.controller()->isRunning());
        view.setStartPossible(true, {});
        QVERIFY(view.startButton()->isEnabled());
        const QString settings = dir.filePath(QStringLiteral("tune.json"));
        QFile(settings).open(QIODevice::WriteOnly);
        view.configEdit()->setText(settings);
        view.folderEdit()->setText(dir.filePath(QStringLiteral("run")));
        qputenv("FAKE_TUNE_FAIL", "1");
        QSignalSpy ended(view.controller(), &TuningRunController::ended);
        QVERIFY(view.start());
        QVERIFY(ended.wait(20000));
        qunsetenv("FAKE_TUNE_FAIL");
        QVERIFY(!ended.at(0).at(0).toBool());
        QTRY_VERIFY_WITH_TIMEOUT(
            view.statusLabel()->text().contains(QLatin1String("exit code 2")) &&
                view.statusLabel()->text().contains(QLatin1String("no model")),
            5000);
        QVERIFY(view.startButton()->isEnabled());

        qputenv("KWB_CLI", dir.filePath(QStringLiteral("no-such-kwb")).toUtf8());
        QVERIFY(view.start());
        QVERIFY(ended.wait(20000));
        QVERIFY(!ended.at(1).at(0).toBool());
        QVERIFY2(ended.at(1).at(1).toString().contains(QLatin1String("could not start")),
                 qPrintable(ended.at(1).at(1).toString()));
        QTRY_VERIFY_WITH_TIMEOUT(!view.controller()->isRunning(), 5000);
        QVERIFY(view.startButton()->isEnabled());
        qunsetenv("KWB_CLI");
    }

private:
    // The stand-in for kwb (tests/data/fake_kwb_tune.sh), copied so that it is executable
    // whatever the checkout's file modes.
    static void useFakeKwb(QTemporaryDir& dir) {
        const QString kwb = dir.filePath(QStringLiteral("fake-kwb"));
        QVERIFY(QFile::copy(QStringLiteral(KWB_TEST_DATA_DIR "/fake_kwb_tune.sh"), kwb));
        QFile(kwb).setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        qputenv("KWB_CLI", kwb.toUtf8());
    }

    // Settings over exported rows (no store needed), with the stand-in as kwb-model.
    agent::EpisodeTrainingConfig configIn(QTemporaryDir& dir) {
        const QString trainer = dir.filePath(QStringLiteral("fake-kwb-model"));
        QFile script(trainer);
        script.open(QIODevice::WriteOnly);
        script.write(kFakeTrainer);
        script.close();
        script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        qputenv("KWB_MODEL_WORKER", trainer.toUtf8());
        const QString rows = dir.filePath(QStringLiteral("rows.jsonl"));
        QFile data(rows);
        data.open(QIODevice::WriteOnly);
        data.write("{\"messages\": []}\n{\"messages\": []}\n");
        data.close();
        std::string error;
        const auto config = agent::EpisodeTrainingConfig::fromJson(
            {{"model", "fake.gguf"},
             {"data", rows.toStdString()},
             {"out", dir.filePath(QStringLiteral("run")).toStdString()},
             {"device", "cpu"}},
            agent::EpisodeTrainingAlgorithm::Ppo, &error);
        if (!config)
            qFatal("%s", error.c_str());
        return *config;
    }
};

} // namespace kwb::ui

QTEST_MAIN(kwb::ui::TestTrainingView)
#include "test_training_view.moc"
