#include "widgets/rollout/training_controller.h"

#include <QMetaObject>
#include <QPointer>
#include <thread>

namespace kwb::ui {

struct TrainingController::Running {
    std::jthread thread;
};

TrainingController::~TrainingController() {
    if (running_)
        running_->thread = {}; // stop and join: the trainer's process group ends with it
}

bool TrainingController::start(agent::EpisodeTrainingConfig config) {
    if (running_) {
        emit failed(tr("A training run is going on; stop it first."));
        return false;
    }
    auto running = std::make_shared<Running>();
    running_ = running;
    QPointer<TrainingController> self(this);
    running->thread = std::jthread([self, running, config](std::stop_token stop) {
        const auto post = [self](auto function) {
            QMetaObject::invokeMethod(self.data(), std::move(function), Qt::QueuedConnection);
        };
        const agent::EpisodeTrainingOutcome outcome = agent::runEpisodeTraining(
            config,
            [&post, self](const nlohmann::json& line) {
                if (line.value("event", "") == "start") {
                    const QString description =
                        tr("%1 on %2 episodes: %3, %4 trainable parameters")
                            .arg(QString::fromStdString(line.value("algorithm", "")))
                            .arg(line.value("conversations", 0))
                            .arg(QString::fromStdString(line.value("model", "")))
                            .arg(line.value("trainable_parameters", std::int64_t(0)));
                    post([self, description] {
                        if (self)
                            emit self->started(description);
                    });
                } else if (const auto row = trainingStepFromJson(line)) {
                    post([self, row = *row] {
                        if (self)
                            emit self->stepTaken(row);
                    });
                }
            },
            stop);
        post([self, running, outcome, out = config.out] {
            if (!self || self->running_ != running)
                return;
            self->running_->thread = {}; // it has returned: the join is immediate
            self->running_.reset();
            if (!outcome.error.empty())
                emit self->failed(QString::fromStdString(outcome.error));
            else
                emit self->ended(outcome.stopped ? QStringLiteral("stopped")
                                                 : QStringLiteral("finished"),
                                 tr("%1 steps on %2 episodes; %3")
                                     .arg(outcome.steps)
                                     .arg(outcome.rows)
                                     .arg(QString::fromStdString(out)));
            emit self->runningChanged(false);
        });
    });
    emit runningChanged(true);
    return true;
}

void TrainingController::stop() {
    if (running_)
        running_->thread.request_stop();
}

} // namespace kwb::ui
