// The Training view: its steps table (checked by Qt's model tester), the settings its form makes
// (or why it cannot yet), and a run followed live from start to end and stopped half-way. The
// trainer here is a stand-in for kwb-model that writes step lines as the real one does;
// model.train_rl runs the real one.
#include "widgets/rollout/training_controller.h"
#include "widgets/rollout/training_step_model.h"
#include "widgets/runs/reward_plot.h"
#include "widgets/training/training_view.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
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

private:
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
