#pragma once

#include "agent/rollout/rollout_control.h"
#include "agent/rollout/rollout_runner.h"

#include <QObject>
#include <QString>
#include <memory>

namespace kwb::ui {

// Runs one rollout at a time (agent::RolloutRunner, as `kwb rollout` runs it) on a thread of its
// own and reports it on the UI thread as queued signals. start() and resumeRun() return at
// once; pause() and unpause() only set the run's RolloutControl; stop() requests the run's stop
// token (running episodes end as stopped and run again on a resume). Only destruction waits for
// the thread, after stopping it.
class RolloutController : public QObject {
    Q_OBJECT
public:
    explicit RolloutController(QString storePath, QObject* parent = nullptr);
    ~RolloutController() override;

    const QString& storePath() const { return storePath_; }
    bool isRunning() const { return running_ != nullptr; }
    bool isPaused() const { return paused_; }

    // False (and runFailed) while a rollout runs. The config's store is this controller's.
    bool start(agent::RolloutConfig config);
    bool resumeRun(qint64 run);
    void pause();
    void unpause();
    void stop();

signals:
    void runOpened(qint64 run);
    void progressed(qint64 run, int done, int planned, int gaveUp);
    // The runner returned: `status` is "finished" or "stopped"; `message` says what happened.
    void runEnded(qint64 run, const QString& status, const QString& message);
    // The run could not start or continue (a bad task set, a locked run, a broken store).
    void runFailed(const QString& message);
    void runningChanged(bool running);
    void pausedChanged(bool paused);

private:
    struct Running;
    using Body = std::function<agent::RolloutOutcome(agent::RolloutRunner&,
                                                     const agent::RolloutRunner::Observer&,
                                                     std::stop_token, agent::RolloutControl*)>;
    bool launch(Body body);
    void finish(const agent::RolloutOutcome& outcome);

    QString storePath_;
    std::shared_ptr<Running> running_;
    qint64 run_ = 0; // the run being executed, once the runner has opened it
    bool paused_ = false;
};

} // namespace kwb::ui
