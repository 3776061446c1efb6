#include "widgets/rollout/rollout_controller.h"

#include <QMetaObject>
#include <QPointer>
#include <QStringList>
#include <thread>

namespace kwb::ui {

struct RolloutController::Running {
    agent::RolloutControl control;
    std::jthread thread; // last: destroyed (stopped and joined) before the control it uses
};

RolloutController::RolloutController(QString storePath, QObject* parent)
    : QObject(parent), storePath_(std::move(storePath)) {}

RolloutController::~RolloutController() {
    if (running_) {
        // The stop token also wakes a paused run: its waits and its episodes' steering see it.
        running_->thread = {};
    }
}

bool RolloutController::start(agent::RolloutConfig config) {
    return launch([config](agent::RolloutRunner& runner,
                           const agent::RolloutRunner::Observer& observer, std::stop_token stop,
                           agent::RolloutControl* control) {
        return runner.start(config, observer, stop, control);
    });
}

bool RolloutController::resumeRun(qint64 run) {
    return launch([run](agent::RolloutRunner& runner,
                        const agent::RolloutRunner::Observer& observer, std::stop_token stop,
                        agent::RolloutControl* control) {
        return runner.resume(run, observer, stop, control);
    });
}

bool RolloutController::launch(Body body) {
    if (running_) {
        emit runFailed(tr("A rollout is already running; stop it first."));
        return false;
    }
    auto running = std::make_shared<Running>();
    running_ = running;
    run_ = 0;
    paused_ = false;
    QPointer<RolloutController> self(this);
    const std::string storePath = storePath_.toStdString();
    // The runner blocks on the model server, the evaluations and SQLite: all of it stays here.
    running->thread = std::jthread([self, running, storePath, body](std::stop_token stop) {
        const auto post = [self](auto function) {
            QMetaObject::invokeMethod(self.data(), std::move(function), Qt::QueuedConnection);
        };
        agent::RolloutRunner runner(storePath);
        const agent::RolloutOutcome outcome = body(
            runner,
            [&post, self](const agent::RolloutProgress& p) {
                post([self, p] {
                    if (!self)
                        return;
                    if (self->run_ != p.run) {
                        self->run_ = p.run;
                        emit self->runOpened(p.run);
                    }
                    emit self->progressed(p.run, p.done, p.planned, p.gaveUp);
                });
            },
            stop, &running->control);
        post([self, running, outcome] {
            // A newer run may not start before this one's thread is joined (finish does that).
            if (self && self->running_ == running)
                self->finish(outcome);
        });
    });
    emit runningChanged(true);
    return true;
}

void RolloutController::finish(const agent::RolloutOutcome& outcome) {
    running_->thread = {}; // it has returned: the join is immediate
    running_.reset();
    const bool wasPaused = paused_;
    paused_ = false;
    if (outcome.status.empty()) {
        emit runFailed(QString::fromStdString(outcome.error));
    } else {
        QString message = tr("Run %1 %2: %3 of %4 done")
                              .arg(outcome.run)
                              .arg(QString::fromStdString(outcome.status))
                              .arg(outcome.done)
                              .arg(outcome.planned);
        if (outcome.gaveUp > 0)
            message += tr(", %n given up after infrastructure errors", nullptr, outcome.gaveUp);
        if (outcome.skipped > 0) {
            QStringList tasks;
            for (const agent::SkippedTask& task : outcome.skippedTasks)
                tasks << QString::fromStdString(task.task);
            message +=
                tr(", %n skipped (tasks that cannot be judged here: %1)", nullptr, outcome.skipped)
                    .arg(tasks.join(QStringLiteral(", ")));
        }
        if (!outcome.error.empty())
            message += QStringLiteral(" (") + QString::fromStdString(outcome.error) + ')';
        emit runEnded(outcome.run, QString::fromStdString(outcome.status), message);
    }
    if (wasPaused)
        emit pausedChanged(false);
    emit runningChanged(false);
}

void RolloutController::pause() {
    if (!running_ || paused_)
        return;
    running_->control.pause();
    paused_ = true;
    emit pausedChanged(true);
}

void RolloutController::unpause() {
    if (!running_ || !paused_)
        return;
    running_->control.resume();
    paused_ = false;
    emit pausedChanged(false);
}

void RolloutController::stop() {
    if (!running_)
        return;
    // Paused or not: the run's stop token wakes its waits and stops its episodes' steering.
    running_->thread.request_stop();
}

} // namespace kwb::ui
