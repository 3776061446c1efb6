#include "widgets/core/agent_session_controller.h"

#include "agent/llm/known_secrets.h"
#include "agent/llm/stream_sink.h"
#include "agent/store/trajectory_store.h"

#include <QMetaObject>
#include <QPointer>
#include <functional>
#include <thread>

namespace kwb::ui {
namespace {

// The model's reply as it streams, on the agent thread: redacted of the session's secrets
// (a key echoed by the model is never shown), then posted to the UI thread piece by piece.
class LiveReplySink final : public agent::StreamSink {
public:
    using Post = std::function<void(QString)>;
    LiveReplySink(std::vector<std::string> secrets, Post post)
        : redactor_(std::move(secrets)), post_(std::move(post)) {}
    void onTextDelta(std::string_view text) override { send(redactor_.feed(text)); }
    void onToolCallStart(int, const std::string&, const std::string& name) override {
        send(redactor_.flush() + "\n[calling " + name + "]");
    }

private:
    void send(const std::string& piece) {
        if (!piece.empty())
            post_(QString::fromStdString(piece));
    }
    agent::StreamRedactor redactor_;
    Post post_;
};

} // namespace

struct AgentSessionController::Session {
    // Shared with the agent::AgentSession the thread assembles, so steering works from the
    // first moment, before the session exists.
    std::shared_ptr<agent::SteeringController> steering =
        std::make_shared<agent::SteeringController>();
    std::jthread thread;
};

AgentSessionController::AgentSessionController(QString storePath, QObject* parent)
    : QObject(parent), storePath_(std::move(storePath)) {
    // The runner changes state between steps without a callback; a cheap poll of the
    // controller's flag (one mutex) is enough for a status line.
    poll_.setInterval(100);
    connect(&poll_, &QTimer::timeout, this, &AgentSessionController::pollState);
}

AgentSessionController::~AgentSessionController() {
    if (session_) {
        session_->steering->stop();
        session_->thread = {}; // joins: stop() cancelled the provider call or tool in flight
    }
}

bool AgentSessionController::start(agent::AgentLaunch launch) {
    launch.forkParent = 0;
    launch.forkStep = 0;
    return this->launch(std::move(launch));
}

bool AgentSessionController::fork(qint64 parent, qint64 step, agent::AgentLaunch launch) {
    launch.forkParent = parent;
    launch.forkStep = step;
    return this->launch(std::move(launch));
}

bool AgentSessionController::launch(agent::AgentLaunch launch) {
    if (session_) {
        emit sessionFailed(tr("An agent episode is already running; stop it first."));
        return false;
    }
    launch.storePath = storePath_.toStdString();
    auto session = std::make_shared<Session>();
    session_ = session;
    episode_.reset();
    QPointer<AgentSessionController> self(this);
    // Everything below may block (files, SQLite, the network), so it all runs on the thread.
    session->thread = std::jthread([self, steering = session->steering, launch] {
        const auto post = [self](auto function) {
            QMetaObject::invokeMethod(self.data(), std::move(function), Qt::QueuedConnection);
        };
        // The store, provider, tools (and their shells) end inside this call, so the thread
        // has nothing left to do when its last message reaches the UI.
        const auto [id, message] = [&]() -> std::pair<agent::EpisodeId, std::string> {
            agent::AgentSession::Prepared prepared = agent::AgentSession::prepare(launch, steering);
            if (!prepared)
                return {0, prepared.error};
            agent::AgentSession& agentSession = *prepared.session;
            agent::TrajectoryStore& store = agentSession.store();

            // Built on this thread, handed over whole: the UI only ever sees finished snapshots.
            agent::EpisodeSnapshotPtr current;
            agent::Subscription live = store.subscribe([&](const agent::StoreUpdate& update) {
                using Kind = agent::StoreUpdate::Kind;
                if (update.kind == Kind::EpisodeChanged) {
                    if (!current || current->record.id != update.episode.id) {
                        // A new episode, or a fork whose copied prefix was written in one go.
                        auto loaded = store.loadTrajectory(update.episode.id);
                        current = loaded ? agent::makeEpisodeSnapshot(std::move(loaded).value())
                                         : agent::withRecord(nullptr, update.episode);
                    } else {
                        current = agent::withRecord(current, update.episode);
                    }
                } else if (update.kind == Kind::EventAppended && current &&
                           update.episodeId == current->record.id) {
                    current = agent::withEvent(current, update.event);
                } else {
                    return;
                }
                post([self, snapshot = current] {
                    if (self) {
                        self->episode_ = snapshot;
                        emit self->episodeUpdated(snapshot);
                    }
                });
            });
            post([self] {
                if (self)
                    emit self->sessionStarted();
            });
            LiveReplySink streamed(agentSession.secrets(), [post, self](QString piece) {
                post([self, piece] {
                    if (self)
                        emit self->replyStreamed(piece);
                });
            });
            const agent::EpisodeRunResult result = agentSession.run(&streamed);
            live.reset();
            return {result.id, "episode " + std::to_string(result.id) + " " +
                                   std::string(agent::episodeStatusName(result.status)) + ": " +
                                   result.message};
        }();
        post([self, failed = id == 0, message = message] {
            if (self)
                self->finishSession(QString::fromStdString(message), failed);
        });
    });
    poll_.start();
    pollState();
    return true;
}

void AgentSessionController::finishSession(const QString& message, bool failed) {
    if (session_) {
        session_->thread = {}; // the thread posted this as its last act: the join is immediate
        session_.reset();
    }
    poll_.stop();
    pollState();
    if (failed)
        emit sessionFailed(message);
    else
        emit sessionFinished(message);
}

void AgentSessionController::pollState() {
    const agent::AgentState now =
        session_ ? session_->steering->state() : agent::AgentState::Stopped;
    if (now != state_) {
        state_ = now;
        emit agentStateChanged(now);
    }
}

void AgentSessionController::pause() {
    if (session_)
        session_->steering->pause();
    // Said at once, not when the step ends: the pane shows "Pausing after this step…".
    emit agentStateChanged(state_);
}

bool AgentSessionController::pausePending() const {
    return session_ && state_ != agent::AgentState::Paused && session_->steering->pauseRequested();
}

void AgentSessionController::interrupt() {
    if (session_)
        session_->steering->interrupt();
}

void AgentSessionController::resume() {
    if (session_)
        session_->steering->resume();
}

void AgentSessionController::stop() {
    if (session_)
        session_->steering->stop();
}

void AgentSessionController::sendMessage(const QString& text,
                                         agent::SteeringController::Mode mode) {
    if (session_ && !text.trimmed().isEmpty())
        session_->steering->injectMessage(text.toStdString(), mode);
}

} // namespace kwb::ui
