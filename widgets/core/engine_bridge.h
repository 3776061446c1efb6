#pragma once

#include "agent/providers/connection_check.h"
#include "agent/rollout/run_snapshot.h"
#include "agent/store/store_reader.h"
#include "engine/counters/ncu_files.h"
#include "engine/evaluation/evaluator.h"
#include "engine/process/job_queue.h"
#include "engine/service/evaluation_service.h"
#include "engine/system/system_report.h"
#include "engine/timeline/kernel_timeline.h"
#include "engine/timeline/trace_file.h"
#include "engine/tuning/tuning_run_reader.h"
#include "engine/workspace/task_catalog.h"

#include <QHash>
#include <QObject>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

namespace kwb::ui {

struct TaskListSnapshot {
    QString directory;
    std::vector<kwb::TaskInfo> tasks;
    std::vector<std::string> problems;
};

// The GUI's one door into the engine. It owns the engine thread; every request runs there and
// its immutable result comes back to the UI thread as a signal. A result superseded by a newer
// request with the same tag is dropped, so the UI only ever sees the latest answer.
class EngineBridge : public QObject {
    Q_OBJECT
public:
    explicit EngineBridge(QObject* parent = nullptr);
    ~EngineBridge() override;

    void requestSystemReport(const QString& configuredPython);
    void requestTaskList(const QString& directory);
    void requestPythonProbe(const QString& interpreterPath);
    // The trajectory store (store_reader.h). Episode sets are tagged by `purpose` ("open",
    // "replay", "aggregate"), so opening one episode does not cancel an aggregate being read.
    void requestEpisodeList(const QString& storePath);
    void requestEpisodes(const QString& storePath, const std::vector<qint64>& ids,
                         const QString& purpose);
    void requestEpisodeExport(const QString& storePath, const std::vector<qint64>& ids,
                              const QString& file);
    // Rollout runs (run_snapshot.h): the list, and one run with its episodes and metrics (tag
    // "run": a newer request wins, so a live view polling it never queues up reads).
    void requestRunList(const QString& storePath);
    void requestRun(const QString& storePath, qint64 run);

    // Evaluates a workspace (tag "evaluate", on a thread of its own): a newer request replaces a
    // queued one and asks a running one to stop. Returns the evaluation's id, which its progress,
    // result and timeline carry. `python` empty: auto-detect.
    // With a `historyFile`, the files evaluated (read as the job starts) and the result go into
    // the workspace's hand-edit history (edit_history.h), and editHistoryReady brings the whole
    // history back; a cancelled or infrastructure-failed evaluation judged nothing and is not
    // kept.
    quint64 requestEvaluation(const QString& workspace, const kwb::EvaluationOptions& options,
                              const QString& python = {}, const QString& historyFile = {});
    // Reads a workspace's hand-edit history (tag "edit-history": a newer request wins).
    void requestEditHistory(const QString& workspace, const QString& historyFile);
    // Reads a file of exported episodes (`kwb episodes export`) without importing it into the
    // store (tag "episodes-file": a newer request wins); episodesFileRead brings them.
    void requestEpisodesFile(const QString& path);
    // Asks the provider for a one-word reply (agent/providers/connection_check; tag
    // "connection-check": a newer request wins); connectionChecked brings the outcome.
    void requestConnectionCheck(const kwb::agent::ProviderSettings& settings);
    // Reads a tuning run's folder (`kwb train tune --out`; tag "tuning-run": a newer request
    // wins), only what was appended since the last read of the same folder; tuningRunReady
    // brings the snapshot.
    void requestTuningRun(const QString& folder);
    quint64 latestEvaluationId() const;
    // Stops the latest evaluation wherever it is (queued, or in its stage); its result comes
    // back as cancelled.
    void cancelEvaluation();
    // Reads a CUPTI record file (kwb-cupti/1 lines) into a timeline (tag "timeline": a newer
    // request wins), e.g. the one an agent step's evaluation recorded.
    void requestTimeline(const QString& recordPath);
    // Opens a trace file the user chose (either format, trace_file.h; tag "trace-file": a newer
    // one stops this one), reporting progress; cancelTraceFile() stops it.
    void requestTraceFile(const QString& path);
    void cancelTraceFile();
    // Reads Nsight Compute CSV files (ncu_files.h) for the counters pane; `purpose` is "current"
    // or "baseline" (the run compared with), each its own tag, so a newer request of a purpose
    // wins.
    void requestCounters(const QStringList& paths, const QString& purpose);

    bool isBusy() const { return inFlight_ > 0; }

signals:
    void systemReportReady(std::shared_ptr<const kwb::SystemReport> report);
    void taskListReady(std::shared_ptr<const kwb::ui::TaskListSnapshot> snapshot);
    void pythonProbeReady(std::shared_ptr<const kwb::PythonProbe> probe);
    void episodeListReady(std::shared_ptr<const kwb::agent::EpisodeListSnapshot> snapshot);
    void episodesReady(std::shared_ptr<const kwb::agent::EpisodeSetSnapshot> snapshot,
                       const QString& purpose);
    void episodeExportDone(bool ok, const QString& message);
    void runListReady(std::shared_ptr<const kwb::agent::RunListSnapshot> snapshot);
    void runReady(kwb::agent::RunSnapshotPtr snapshot);
    void busyChanged(bool busy);
    // A workspace's hand-edit history as an episode; `problem` says what could not be written or
    // read (the history shown is then what could be).
    // For requestEpisodesFile: the episodes in file order, or why the file cannot be read (a
    // malformed line names its number; then no episode is given).
    void episodesFileRead(const QString& path, QList<kwb::agent::EpisodeSnapshotPtr> episodes,
                          const QString& error);
    void connectionChecked(std::shared_ptr<const kwb::agent::ConnectionCheck> check);
    void tuningRunReady(std::shared_ptr<const kwb::TuningRunSnapshot> snapshot);
    void editHistoryReady(const QString& workspace, kwb::agent::EpisodeSnapshotPtr history,
                          const QString& problem);
    // Only for the latest evaluation request; superseded ones go quiet.
    void evaluationProgress(quint64 evaluationId, const QString& stage);
    void evaluationReady(quint64 evaluationId, std::shared_ptr<const kwb::EvaluationResult> result);
    // After evaluationReady, when the result recorded a CUPTI timeline.
    void evaluationTimelineReady(quint64 evaluationId, kwb::timeline::TimelineSnapshot timeline);
    // For requestTimeline; an empty snapshot when the file cannot be read.
    void timelineReady(const QString& recordPath, kwb::timeline::TimelineSnapshot timeline);
    // For requestTraceFile: now and then while it loads (bytes), then once with the outcome
    // (a timeline, an error, or cancelled).
    void traceFileProgress(const QString& path, qint64 done, qint64 total);
    void traceFileLoaded(const QString& path,
                         std::shared_ptr<const kwb::timeline::LoadedTrace> trace);
    // For requestCounters: the report, or the reason it could not be read.
    void countersLoaded(const QString& purpose,
                        std::shared_ptr<const kwb::counters::LoadedCounters> counters);

private:
    // Runs `work` on the engine thread and `deliver` with its result on the UI thread, unless
    // a newer request with the same tag was made meanwhile.
    // `queue`: the engine thread's queue unless given (evaluations have a thread of their own).
    template <typename Result>
    void post(const QString& tag, std::function<Result(std::stop_token)> work,
              std::function<void(Result)> deliver, kwb::JobQueue* queue = nullptr);
    void setInFlight(int delta);
    class Services;
    // Shared with the jobs, which create the service on the engine thread (it probes the GPUs).
    std::shared_ptr<Services> services_;
    class HistoryReaders;
    // The hand-edit history being shown, read as it grows; shared with the jobs that read it.
    std::shared_ptr<HistoryReaders> historyReaders_;
    // The tuning run being followed, read as it grows; shared with the jobs that read it.
    class TuningRunReaders;
    std::shared_ptr<TuningRunReaders> tuningRunReaders_;
    QHash<QString, quint64> latestId_;
    // The trace file being opened: Cancel stops it (a newer request stops it through its tag).
    std::shared_ptr<std::stop_source> traceCancel_;
    // The latest evaluation: cancelEvaluation() stops it.
    std::shared_ptr<std::stop_source> evaluationCancel_;
    int inFlight_ = 0;
    std::unique_ptr<kwb::JobQueue> queue_; // destroyed first: joins the thread before the rest
    // Evaluations wait on their service's ticket here, so that store reads, timeline loads and
    // probes on queue_ never wait behind one.
    std::unique_ptr<kwb::JobQueue> evaluationQueue_;
};

} // namespace kwb::ui
