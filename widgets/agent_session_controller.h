#pragma once

#include "agent/provider_settings.h"
#include "agent/steering.h"
#include "widgets/episode_snapshot.h"

#include <QObject>
#include <QString>
#include <QTimer>
#include <memory>

namespace kwb::ui {

// What the GUI starts an episode with; the same EpisodeConfig fields `kwb agent` fills.
struct AgentStartRequest {
    QString taskPath;
    QString workspace; // empty: a fresh folder under the temp directory
    agent::ProviderSettings provider;
    int maxTurns = 200;
    QString python; // empty: auto-detect
    bool finalEvaluation = true;
};

// Runs one agent episode at a time on its own thread and turns the store's live updates into
// immutable snapshots on the UI thread. The UI never waits on it: start() returns at once,
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
    // False (and sessionFailed) when an episode is already running.
    bool start(const AgentStartRequest& request);
    // A new episode continuing `parent` from its event `step`, in a fresh workspace.
    bool fork(qint64 parent, qint64 step, const AgentStartRequest& request);

    void pause();
    void interrupt();
    void resume();
    void stop();
    // Queue: delivered before the next model call. Steer: the call streaming now is cancelled
    // and made again with the message.
    void sendMessage(const QString& text, agent::SteeringController::Mode mode);

    agent::AgentState agentState() const { return state_; }
    EpisodeSnapshotPtr episode() const { return episode_; }

signals:
    void episodeUpdated(kwb::ui::EpisodeSnapshotPtr episode);
    void agentStateChanged(kwb::agent::AgentState state);
    void sessionStarted();
    void sessionFinished(const QString& message);
    void sessionFailed(const QString& message);

private:
    struct Session;
    bool launch(const AgentStartRequest& request, qint64 parent, qint64 step);
    void pollState();
    void finishSession(const QString& message, bool failed);

    QString storePath_;
    std::shared_ptr<Session> session_;
    EpisodeSnapshotPtr episode_;
    agent::AgentState state_ = agent::AgentState::Stopped;
    QTimer poll_;
};

} // namespace kwb::ui
