#include "widgets/agent_session_controller.h"

#include "agent/episode_runner.h"
#include "agent/provider_factory.h"
#include "agent/tools/default_tools.h"
#include "agent/trajectory_store.h"
#include "engine/workspace.h"

#include <QDir>
#include <QMetaObject>
#include <QPointer>
#include <QTemporaryDir>
#include <filesystem>
#include <thread>

namespace kwb::ui {

struct AgentSessionController::Session {
    agent::SteeringController steering;
    std::jthread thread;
};

namespace {

namespace fs = std::filesystem;

// A new empty folder for a workspace; the episode keeps it after the GUI exits.
QString freshWorkspaceFolder(const QString& taskPath) {
    QTemporaryDir dir(
        QDir::tempPath() +
        QStringLiteral("/kwb-agent-%1-XXXXXX").arg(QFileInfo(taskPath).completeBaseName()));
    dir.setAutoRemove(false);
    return dir.isValid() ? dir.path() : QString();
}

} // namespace

AgentSessionController::AgentSessionController(QString storePath, QObject* parent)
    : QObject(parent), storePath_(std::move(storePath)) {
    // The runner changes state between steps without a callback; a cheap poll of the
    // controller's flag (one mutex) is enough for a status line.
    poll_.setInterval(100);
    connect(&poll_, &QTimer::timeout, this, &AgentSessionController::pollState);
}

AgentSessionController::~AgentSessionController() {
    if (session_) {
        session_->steering.stop();
        session_->thread = {}; // joins: stop() cancelled the provider call or tool in flight
    }
}

bool AgentSessionController::start(const AgentStartRequest& request) {
    return launch(request, 0, 0);
}

bool AgentSessionController::fork(qint64 parent, qint64 step, const AgentStartRequest& request) {
    return launch(request, parent, step);
}

bool AgentSessionController::launch(const AgentStartRequest& request, qint64 parent, qint64 step) {
    if (session_) {
        emit sessionFailed(tr("An agent episode is already running; stop it first."));
        return false;
    }
    // A fork always gets a new folder: the runner rebuilds the parent's files there.
    const QString workspace = parent != 0 || request.workspace.isEmpty()
                                  ? freshWorkspaceFolder(request.taskPath)
                                  : request.workspace;
    if (workspace.isEmpty()) {
        emit sessionFailed(tr("Cannot create a workspace folder in %1").arg(QDir::tempPath()));
        return false;
    }
    auto session = std::make_shared<Session>();
    session_ = session;
    episode_.reset();
    QPointer<AgentSessionController> self(this);
    const std::string storePath = storePath_.toStdString();
    const std::string task = request.taskPath.toStdString();
    const std::string ws = workspace.toStdString();
    // Everything below may block (files, SQLite, the network), so it all runs on the thread.
    session->thread = std::jthread([self, session, request, storePath, task, ws, parent, step] {
        const auto post = [self](auto function) {
            QMetaObject::invokeMethod(self.data(), std::move(function), Qt::QueuedConnection);
        };
        const auto fail = [&](const std::string& message) {
            post([self, message] {
                if (self)
                    self->finishSession(QString::fromStdString(message), true);
            });
        };
        if (parent == 0 && !isWorkspace(ws)) {
            WorkspaceInitResult made = initWorkspace(task, ws);
            if (!made.ok)
                return fail(made.error);
        }
        // The store, provider, tools (and their shells) end inside this call, so the thread
        // has nothing left to do when its last message reaches the UI.
        const auto [id, message] = [&]() -> std::pair<agent::EpisodeId, std::string> {
            const std::string key = request.provider.resolveApiKey().reveal();
            auto opened = agent::TrajectoryStore::open(
                storePath,
                {key.empty() ? std::vector<std::string>{} : std::vector<std::string>{key}});
            if (!opened)
                return {0, opened.error().message};
            agent::TrajectoryStore& store = *opened.value();
            std::unique_ptr<agent::LlmProvider> provider = agent::makeProvider(request.provider);
            agent::ToolRegistry tools;
            agent::addDefaultTools(tools);

            agent::EpisodeConfig config;
            config.taskPath = fs::absolute(task).string();
            config.workspace = fs::absolute(ws).string();
            config.maxTurns = request.maxTurns;
            config.model = request.provider.model;
            config.providerDescription = provider->describe();
            config.python = request.python.toStdString();
            config.finalEvaluation = request.finalEvaluation;

            // Built on this thread, handed over whole: the UI only ever sees finished snapshots.
            EpisodeSnapshotPtr current;
            agent::Subscription live = store.subscribe([&](const agent::StoreUpdate& update) {
                using Kind = agent::StoreUpdate::Kind;
                if (update.kind == Kind::EpisodeChanged) {
                    if (!current || current->record.id != update.episode.id) {
                        // A new episode, or a fork whose copied prefix was written in one go.
                        auto loaded = store.loadTrajectory(update.episode.id);
                        current = loaded ? makeEpisodeSnapshot(std::move(loaded).value())
                                         : withRecord(nullptr, update.episode);
                    } else {
                        current = withRecord(current, update.episode);
                    }
                } else if (update.kind == Kind::EventAppended && current &&
                           update.episodeId == current->record.id) {
                    current = withEvent(current, update.event);
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
            agent::EpisodeRunner runner(store, *provider, tools, session->steering, config);
            const agent::EpisodeRunResult result =
                parent != 0 ? runner.forkFrom(parent, step) : runner.run();
            live.reset();
            return {result.id, "episode " + std::to_string(result.id) + " " +
                                   std::string(agent::episodeStatusName(result.status)) + ": " +
                                   result.message};
        }();
        if (id == 0)
            return fail(message);
        post([self, message = message] {
            if (self)
                self->finishSession(QString::fromStdString(message), false);
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
        session_ ? session_->steering.state() : agent::AgentState::Stopped;
    if (now != state_) {
        state_ = now;
        emit agentStateChanged(now);
    }
}

void AgentSessionController::pause() {
    if (session_)
        session_->steering.pause();
}

void AgentSessionController::interrupt() {
    if (session_)
        session_->steering.interrupt();
}

void AgentSessionController::resume() {
    if (session_)
        session_->steering.resume();
}

void AgentSessionController::stop() {
    if (session_)
        session_->steering.stop();
}

void AgentSessionController::sendMessage(const QString& text,
                                         agent::SteeringController::Mode mode) {
    if (session_ && !text.trimmed().isEmpty())
        session_->steering.injectMessage(text.toStdString(), mode);
}

} // namespace kwb::ui
