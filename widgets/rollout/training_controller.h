#pragma once

#include "agent/rollout/episode_training.h"
#include "widgets/rollout/training_step_model.h"

#include <QObject>
#include <QString>
#include <memory>

namespace kwb::ui {

// Runs one episode training at a time (agent::runEpisodeTraining, as `kwb train
// rft|grpo|value|ppo` runs it) on a thread of its own: the export, kwb-model's process and the
// following of its steps stay off the UI thread, and each step arrives as a queued signal.
// stop() ends the trainer; only destruction waits for the thread, after stopping it.
class TrainingController : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    ~TrainingController() override;

    bool isRunning() const { return running_ != nullptr; }
    // False (and failed) while a training runs.
    bool start(agent::EpisodeTrainingConfig config);
    void stop();

signals:
    // kwb-model's start line: the algorithm, the episodes, the model, its trainable parameters.
    void started(const QString& description);
    void stepTaken(const kwb::ui::TrainingStepRow& row);
    // The training ended: "finished" or "stopped", with a line that says what it did.
    void ended(const QString& status, const QString& message);
    void failed(const QString& message);
    void runningChanged(bool running);

private:
    struct Running;
    std::shared_ptr<Running> running_;
};

} // namespace kwb::ui
