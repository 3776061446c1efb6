#pragma once

#include "agent/session/agent_session.h"
#include "agent/session/steering.h"
#include "agent/store/episode_snapshot.h"

#include <QObject>
#include <QString>
#include <QTimer>
#include <memory>

namespace kwb::ui {

// Runs one agent episode at a time (an agent::AgentSession, assembled exactly as `kwb agent`
// assembles it) on its own thread and turns the store's live updates into immutable snapshots
// on the UI thread. The UI never waits on it: start() returns at once,
// steering calls only set flags in the SteeringController, and everything the runner does
// arrives as queued signals. Only destruction joins the thread, after stop() has cancelled the
// call in flight.
class AgentSessionController : public QObject {
    Q_OBJECT
public:
    explicit AgentSessionController(QString storePath, QObject* parent = nullptr);
    ~AgentSessionController() override;

    const QString& storePath() const { return storePath_; }
    bool isRunning() const { return session_ != nullptr; }
    // False (and sessionFailed) when an episode is already running. The launch's store is
    // always this controller's.
    bool start(agent::AgentLaunch launch);
    // A new episode continuing `parent` from its event `step`, in a fresh workspace.
    bool fork(qint64 parent, qint64 step, agent::AgentLaunch launch);

    void pause();
    void interrupt();
    void resume();
    void stop();
    // Queue: delivered before the next model call. Steer: the call streaming now is cancelled
    // and made again with the message.
    void sendMessage(const QString& text, agent::SteeringController::Mode mode);

    agent::AgentState agentState() const { return state_; }
    // Pause was asked for and the agent has not paused yet (it finishes its step first).
    bool pausePending() const;
    agent::EpisodeSnapshotPtr episode() const { return episode_; }

signals:
    void episodeUpdated(kwb::agent::EpisodeSnapshotPtr episode);
    void agentStateChanged(kwb::agent::AgentState state);
    // A piece of the model's reply as it streams (secrets redacted; "[calling Tool]" when a tool
    // call begins). The whole reply arrives as an event once the turn ends.
    void replyStreamed(const QString& piece);
    void sessionStarted();
    void sessionFinished(const QString& message);
    void sessionFailed(const QString& message);

private:
    struct Session;
    bool launch(agent::AgentLaunch launch);
    void pollState();
    void finishSession(const QString& message, bool failed);

    QString storePath_;
    std::shared_ptr<Session> session_; // the running session's thread and steering handle
    agent::EpisodeSnapshotPtr episode_;
    agent::AgentState state_ = agent::AgentState::Stopped;
    QTimer poll_;
};

} // namespace kwb::ui
