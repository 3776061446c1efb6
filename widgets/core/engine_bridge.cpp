#include "widgets/core/engine_bridge.h"

#include "agent/store/edit_history.h"
#include "agent/store/episode_export.h"
#include "agent/store/trajectory_store.h"
#include "engine/evaluation/failure_kinds.h"
#include "engine/system/utc_timestamp.h"
#include "engine/timeline/trace_file.h"
#include "engine/workspace/workspace_files.h"

#include <QMetaObject>
#include <QPointer>
#include <fstream>
#include <mutex>

namespace kwb::ui {

EngineBridge::EngineBridge(QObject* parent)
    : QObject(parent), services_(std::make_shared<Services>()),
      historyReaders_(std::make_shared<HistoryReaders>()),
      tuningRunReaders_(std::make_shared<TuningRunReaders>()),
      queue_(std::make_unique<kwb::JobQueue>()),
      evaluationQueue_(std::make_unique<kwb::JobQueue>()) {}

EngineBridge::~EngineBridge() {
    evaluationQueue_.reset(); // stops the running evaluation's ticket
    queue_.reset();
}

// The evaluation service for one task Python at a time: a new setting gets a new service, and
// the old one goes once the last evaluation holding it ends.
class EngineBridge::Services {
public:
    std::shared_ptr<kwb::EvaluationService> forPython(const std::string& python) {
        std::lock_guard lock(mutex_);
        if (!service_ || python_ != python) {
            service_ = std::make_shared<kwb::EvaluationService>(
                kwb::EvaluationServiceConfig{.python = python, .concurrentEvaluations = 1});
            python_ = python;
        }
        return service_;
    }

private:
    std::mutex mutex_;
    std::shared_ptr<kwb::EvaluationService> service_;
    std::string python_;
};

void EngineBridge::setInFlight(int delta) {
    const bool wasBusy = inFlight_ > 0;
    inFlight_ += delta;
    if (wasBusy != (inFlight_ > 0))
        emit busyChanged(inFlight_ > 0);
}

template <typename Result>
void EngineBridge::post(const QString& tag, std::function<Result(std::stop_token)> work,
                        std::function<void(Result)> deliver, kwb::JobQueue* queue) {
    QPointer<EngineBridge> self(this);
    setInFlight(+1);
    // The id is only known after submit, so the job reads it from a shared slot.
    auto idSlot = std::make_shared<std::atomic<quint64>>(0);
    std::size_t replaced = 0;
    const quint64 id =
        (queue ? queue : queue_.get())
            ->submit(
                tag.toStdString(),
                [self, idSlot, work, deliver, tag](std::stop_token stop) {
                    Result result = work(stop);
                    QMetaObject::invokeMethod(
                        self.data(),
                        [self, idSlot, deliver, tag, result = std::move(result)]() mutable {
                            if (!self)
                                return;
                            self->setInFlight(-1);
                            if (self->latestId_.value(tag) == idSlot->load())
                                deliver(std::move(result));
                        },
                        Qt::QueuedConnection);
                },
                &replaced);
    idSlot->store(id);
    latestId_[tag] = id;
    // A replaced job never runs, so it never reports back: count it out here.
    if (replaced > 0)
        setInFlight(-static_cast<int>(replaced));
}

void EngineBridge::requestSystemReport(const QString& configuredPython) {
    const std::string python = configuredPython.toStdString();
    post<std::shared_ptr<const kwb::SystemReport>>(
        QStringLiteral("system-report"),
        [python](std::stop_token) {
            return std::make_shared<const kwb::SystemReport>(kwb::collectSystemReport(python));
        },
        [this](std::shared_ptr<const kwb::SystemReport> report) {
            emit systemReportReady(report);
        });
}

void EngineBridge::requestTaskList(const QString& directory) {
    const std::string dir = directory.toStdString();
    post<std::shared_ptr<const TaskListSnapshot>>(
        QStringLiteral("task-list"),
        [dir, directory](std::stop_token) {
            auto snapshot = std::make_shared<TaskListSnapshot>();
            snapshot->directory = directory;
            snapshot->tasks = kwb::listTasks(dir, &snapshot->problems);
            return std::shared_ptr<const TaskListSnapshot>(std::move(snapshot));
        },
        [this](std::shared_ptr<const TaskListSnapshot> snapshot) { emit taskListReady(snapshot); });
}

void EngineBridge::requestPythonProbe(const QString& interpreterPath) {
    const std::string path = interpreterPath.toStdString();
    post<std::shared_ptr<const kwb::PythonProbe>>(
        QStringLiteral("python-probe"),
        [path](std::stop_token) {
            return std::make_shared<const kwb::PythonProbe>(
                path.empty() ? kwb::detectPython(std::string()) : kwb::probePython(path));
        },
        [this](std::shared_ptr<const kwb::PythonProbe> probe) { emit pythonProbeReady(probe); });
}

void EngineBridge::requestEpisodeList(const QString& storePath) {
    const std::string path = storePath.toStdString();
    post<std::shared_ptr<const agent::EpisodeListSnapshot>>(
        QStringLiteral("episode-list"),
        [path](std::stop_token) {
            return std::make_shared<const agent::EpisodeListSnapshot>(agent::readEpisodeList(path));
        },
        [this](std::shared_ptr<const kwb::agent::EpisodeListSnapshot> snapshot) {
            emit episodeListReady(snapshot);
        });
}

void EngineBridge::requestRunList(const QString& storePath) {
    const std::string path = storePath.toStdString();
    post<std::shared_ptr<const agent::RunListSnapshot>>(
        QStringLiteral("run-list"),
        [path](std::stop_token) {
            return std::make_shared<const agent::RunListSnapshot>(agent::readRunList(path));
        },
        [this](std::shared_ptr<const kwb::agent::RunListSnapshot> snapshot) {
            emit runListReady(snapshot);
        });
}

void EngineBridge::requestRun(const QString& storePath, qint64 run) {
    const std::string path = storePath.toStdString();
    post<agent::RunSnapshotPtr>(
        QStringLiteral("run"),
        [path, run](std::stop_token) {
            return std::make_shared<const agent::RunSnapshot>(agent::readRun(path, run));
        },
        [this](agent::RunSnapshotPtr snapshot) { emit runReady(snapshot); });
}

void EngineBridge::requestEpisodes(const QString& storePath, const std::vector<qint64>& ids,
                                   const QString& purpose) {
    const std::string path = storePath.toStdString();
    const std::vector<agent::EpisodeId> wanted(ids.begin(), ids.end());
    post<std::shared_ptr<const agent::EpisodeSetSnapshot>>(
        QStringLiteral("episodes:") + purpose,
        [path, wanted](std::stop_token) {
            return std::make_shared<const agent::EpisodeSetSnapshot>(
                agent::readEpisodes(path, wanted));
        },
        [this, purpose](std::shared_ptr<const kwb::agent::EpisodeSetSnapshot> snapshot) {
            emit episodesReady(snapshot, purpose);
        });
}

void EngineBridge::requestEpisodeExport(const QString& storePath, const std::vector<qint64>& ids,
                                        const QString& file) {
    const std::string path = storePath.toStdString();
    const std::string target = file.toStdString();
    const std::vector<agent::EpisodeId> wanted(ids.begin(), ids.end());
    post<std::pair<bool, QString>>(
        QStringLiteral("episode-export"),
        [path, target, wanted](std::stop_token) {
            auto store = agent::TrajectoryStore::open(path);
            if (!store)
                return std::pair{false, QString::fromStdString(store.error().message)};
            auto written =
                agent::exportEpisodes(*store.value(), wanted, std::filesystem::path(target));
            if (!written)
                return std::pair{false, QString::fromStdString(written.error().message)};
            return std::pair{true, QStringLiteral("exported %1 episode(s) to %2")
                                       .arg(written.value())
                                       .arg(QString::fromStdString(target))};
        },
        [this](std::pair<bool, QString> outcome) {
            emit episodeExportDone(outcome.first, outcome.second);
        });
}

namespace {

struct EvaluationOutcome {
    std::shared_ptr<const kwb::EvaluationResult> result;
    kwb::timeline::TimelineSnapshot timeline;
    agent::EpisodeSnapshotPtr history; // with a history file only
    QString historyProblem;
};

struct HistoryOutcome {
    agent::EpisodeSnapshotPtr history;
    QString problem;
};

} // namespace

// The reader of the history last asked for: after an evaluation it reads that evaluation's line
// only. One at a time, since an evaluation's job and a history request can run on two threads.
class EngineBridge::HistoryReaders {
public:
    agent::EditHistory read(const std::string& file, const std::string& workspace) {
        std::lock_guard lock(mutex_);
        if (!reader_ || file_ != file || workspace_ != workspace) {
            reader_ = std::make_unique<agent::EditHistoryReader>(file, workspace);
            file_ = file;
            workspace_ = workspace;
        }
        return reader_->read();
    }

private:
    std::mutex mutex_;
    std::string file_, workspace_;
    std::unique_ptr<agent::EditHistoryReader> reader_;
};

// The reader of the tuning run last asked for: a run followed once a second reads only what
// was appended since. One at a time, like the history's.
class EngineBridge::TuningRunReaders {
public:
    TuningRunSnapshotPtr read(const std::string& folder) {
        std::lock_guard lock(mutex_);
        if (!reader_ || reader_->folder() != folder)
            reader_ = std::make_unique<TuningRunReader>(folder);
        return reader_->read();
    }

private:
    std::mutex mutex_;
    std::unique_ptr<TuningRunReader> reader_;
};

namespace {

HistoryOutcome outcomeOf(agent::EditHistory read, const std::string& file) {
    HistoryOutcome out;
    if (!read.error.empty())
        out.problem = QString::fromStdString(read.error);
    else if (read.skippedLines > 0)
        out.problem =
            QObject::tr("%n unreadable line(s) in %1 were skipped", nullptr, read.skippedLines)
                .arg(QString::fromStdString(file));
    out.history = agent::makeEpisodeSnapshot(std::move(read.trajectory));
    return out;
}

// Failures that judged nothing about the candidate: kept out of the hand-edit history.
bool judgedTheCandidate(const kwb::EvaluationResult& result) {
    return result.failureKind != "cancelled" && !kwb::isInfrastructureFailure(result.failureKind);
}

kwb::timeline::TimelineSnapshot loadTimeline(const std::string& recordPath) {
    return kwb::timeline::loadTraceFile(recordPath).timeline;
}

} // namespace

void EngineBridge::requestTimeline(const QString& recordPath) {
    const std::string path = recordPath.toStdString();
    post<kwb::timeline::TimelineSnapshot>(
        QStringLiteral("timeline"), [path](std::stop_token) { return loadTimeline(path); },
        [this, recordPath](kwb::timeline::TimelineSnapshot timeline) {
            emit timelineReady(recordPath, std::move(timeline));
        });
}

void EngineBridge::requestTraceFile(const QString& path) {
    if (traceCancel_)
        traceCancel_->request_stop();
    auto cancel = std::make_shared<std::stop_source>();
    traceCancel_ = cancel;
    const std::string file = path.toStdString();
    QPointer<EngineBridge> self(this);
    using Loaded = std::shared_ptr<const kwb::timeline::LoadedTrace>;
    post<Loaded>(
        QStringLiteral("trace-file"),
        [self, path, file, cancel](std::stop_token jobStop) {
            // Either stop ends the load: a newer request (the job's token) or Cancel.
            std::stop_source stop;
            std::stop_callback byJob(jobStop, [&stop] { stop.request_stop(); });
            std::stop_callback byUser(cancel->get_token(), [&stop] { stop.request_stop(); });
            int lastPermille = -1;
            auto progress = [&](std::uint64_t done, std::uint64_t total) {
                // At most a thousand updates, however many blocks the file has.
                const int permille = total > 0 ? static_cast<int>(done * 1000 / total) : 0;
                if (permille == lastPermille)
                    return;
                lastPermille = permille;
                QMetaObject::invokeMethod(
                    self.data(),
                    [self, path, done, total] {
                        if (self)
                            emit self->traceFileProgress(path, static_cast<qint64>(done),
                                                         static_cast<qint64>(total));
                    },
                    Qt::QueuedConnection);
            };
            return Loaded(std::make_shared<const kwb::timeline::LoadedTrace>(
                kwb::timeline::loadTraceFile(file, stop.get_token(), progress)));
        },
        [this, path](Loaded trace) { emit traceFileLoaded(path, std::move(trace)); });
}

void EngineBridge::requestCounters(const QStringList& paths, const QString& purpose) {
    std::vector<std::string> files;
    for (const QString& path : paths)
        files.push_back(path.toStdString());
    using Loaded = std::shared_ptr<const kwb::counters::LoadedCounters>;
    post<Loaded>(
        QStringLiteral("counters-") + purpose,
        [files](std::stop_token) {
            return Loaded(std::make_shared<const kwb::counters::LoadedCounters>(
                kwb::counters::loadNcuFiles(files)));
        },
        [this, purpose](Loaded counters) { emit countersLoaded(purpose, std::move(counters)); });
}

void EngineBridge::cancelEvaluation() {
    if (evaluationCancel_)
        evaluationCancel_->request_stop();
}

void EngineBridge::cancelTraceFile() {
    if (traceCancel_)
        traceCancel_->request_stop();
}

quint64 EngineBridge::latestEvaluationId() const {
    return latestId_.value(QStringLiteral("evaluate"));
}

quint64 EngineBridge::requestEvaluation(const QString& workspace,
                                        const kwb::EvaluationOptions& options,
                                        const QString& python, const QString& historyFile) {
    const QString tag = QStringLiteral("evaluate");
    const std::string directory = workspace.toStdString();
    const std::string history = historyFile.toStdString();
    const std::string interpreter = python.toStdString();
    // Progress is posted from the engine thread; the id is filled in before the UI thread can
    // run any of those posts, since it is busy here until post() returns.
    auto idSlot = std::make_shared<std::atomic<quint64>>(0);
    QPointer<EngineBridge> self(this);
    auto onStage = [self, idSlot, tag](const std::string& stage) {
        const QString name = QString::fromStdString(stage);
        QMetaObject::invokeMethod(
            self.data(),
            [self, idSlot, tag, name] {
                if (self && self->latestId_.value(tag) == idSlot->load())
                    emit self->evaluationProgress(idSlot->load(), name);
            },
            Qt::QueuedConnection);
    };
    auto cancel = std::make_shared<std::stop_source>();
    evaluationCancel_ = cancel;
    post<EvaluationOutcome>(
        tag,
        [services = services_, directory, interpreter, options, onStage, cancel, history,
         readers = historyReaders_](std::stop_token jobStop) {
            // The files as this evaluation reads them: a save after it starts is the next one's.
            kwb::WorkspaceFiles files;
            if (!history.empty())
                files = kwb::scanWorkspaceFiles(directory);
            // A newer request stops this job's token, and Cancel the user's source; either
            // cancels the ticket in its stage.
            std::stop_source stopSource;
            std::stop_callback byJob(jobStop, [&stopSource] { stopSource.request_stop(); });
            std::stop_callback byUser(cancel->get_token(),
                                      [&stopSource] { stopSource.request_stop(); });
            const std::stop_token stop = stopSource.get_token();
            kwb::EvaluationSnapshot result =
                services->forPython(interpreter)
                    ->evaluate({kwb::EvaluationTarget::forWorkspace(directory), options, "gui"},
                               onStage, stop);
            EvaluationOutcome outcome{result, {}, {}, {}};
            if (!result->timelineRecordPath.empty() && !stop.stop_requested())
                outcome.timeline = loadTimeline(result->timelineRecordPath);
            if (!history.empty() && judgedTheCandidate(*result)) {
                std::string error;
                const bool kept = agent::appendEditHistory(
                    history, directory, files, kwb::toJson(*result), kwb::utcTimestamp(), &error);
                HistoryOutcome read = outcomeOf(readers->read(history, directory), history);
                outcome.history = std::move(read.history);
                outcome.historyProblem =
                    kept ? read.problem
                         : QObject::tr("This evaluation is not in the history: %1")
                               .arg(QString::fromStdString(error));
            }
            return outcome;
        },
        [this, idSlot, workspace](EvaluationOutcome outcome) {
            emit evaluationReady(idSlot->load(), outcome.result);
            if (outcome.timeline)
                emit evaluationTimelineReady(idSlot->load(), outcome.timeline);
            if (outcome.history)
                emit editHistoryReady(workspace, outcome.history, outcome.historyProblem);
        },
        evaluationQueue_.get());
    idSlot->store(latestId_.value(tag));
    return idSlot->load();
}

void EngineBridge::requestConnectionCheck(const kwb::agent::ProviderSettings& settings) {
    using Check = std::shared_ptr<const agent::ConnectionCheck>;
    post<Check>(
        QStringLiteral("connection-check"),
        [settings](std::stop_token stop) {
            return std::make_shared<const agent::ConnectionCheck>(
                agent::checkConnection(settings, stop));
        },
        [this](Check check) { emit connectionChecked(std::move(check)); });
}

void EngineBridge::requestTuningRun(const QString& folder) {
    post<TuningRunSnapshotPtr>(
        QStringLiteral("tuning-run"),
        [file = folder.toStdString(), readers = tuningRunReaders_](std::stop_token) {
            return readers->read(file);
        },
        [this](TuningRunSnapshotPtr snapshot) { emit tuningRunReady(std::move(snapshot)); });
}

void EngineBridge::requestEpisodesFile(const QString& path) {
    struct Read {
        QList<agent::EpisodeSnapshotPtr> episodes;
        QString error;
    };
    post<Read>(
        QStringLiteral("episodes-file"),
        [file = path.toStdString()](std::stop_token) {
            Read read;
            std::ifstream in(file, std::ios::binary);
            if (!in) {
                read.error = QObject::tr("cannot read %1").arg(QString::fromStdString(file));
                return read;
            }
            auto lines = agent::readEpisodeLines(in);
            if (!lines) {
                read.error = QString::fromStdString(lines.error().message);
                return read;
            }
            for (agent::EpisodeTrajectory& trajectory : lines.value())
                read.episodes.push_back(agent::makeEpisodeSnapshot(std::move(trajectory)));
            return read;
        },
        [this, path](Read read) { emit episodesFileRead(path, read.episodes, read.error); });
}

void EngineBridge::requestEditHistory(const QString& workspace, const QString& historyFile) {
    const std::string file = historyFile.toStdString();
    const std::string directory = workspace.toStdString();
    post<HistoryOutcome>(
        QStringLiteral("edit-history"),
        [file, directory, readers = historyReaders_](std::stop_token) {
            return outcomeOf(readers->read(file, directory), file);
        },
        [this, workspace](HistoryOutcome read) {
            emit editHistoryReady(workspace, std::move(read.history), read.problem);
        });
}

} // namespace kwb::ui
