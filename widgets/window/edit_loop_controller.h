#pragma once

#include "agent/store/episode_snapshot.h"
#include "engine/evaluation/evaluator.h"
#include "engine/timeline/kernel_timeline.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <memory>

class QAction;
class QLabel;
class QProgressBar;
class QToolButton;
class QWidget;

namespace kwb::ui {

class AppSettings;
class CandidateEditors;
class EngineBridge;
class ResultPanel;

// The hand-edit loop: a save in the candidate editors (Ctrl+S) evaluates the open workspace
// through the bridge's warm worker with quick timing (like `kwb eval --fast`) when Verify on
// Save is on, shows the running stage in a busy indicator, and hands the result to the result
// panel. A save during a run supersedes it: only the newest evaluation is shown. Cancel (the
// button beside the stage in the status bar) stops it in whatever stage it is. Every judged
// evaluation goes into the workspace's hand-edit history (edit_history.h) with the files it
// read; the history comes back as an episode for the Rewards plot and the compare views.
class EditLoopController : public QObject {
    Q_OBJECT
public:
    EditLoopController(EngineBridge& bridge, AppSettings& settings, CandidateEditors* editors,
                       ResultPanel* results, QObject* parent = nullptr);
    ~EditLoopController() override;

    // The quick-feedback options: warm worker, 3 checks, at most 5 rounds or 3 s, CV 5 %.
    static kwb::EvaluationOptions editLoopOptions();

    // Empty: no workspace, saves do not evaluate. A new workspace's history is read (off the UI
    // thread) and arrives through historyChanged.
    void setWorkspace(const QString& directory);
    QString workspace() const { return workspace_; }
    // The workspace's hand-edit history, null until read (or with no workspace).
    agent::EpisodeSnapshotPtr history() const { return history_; }
    QString historyFile() const { return historyFile_; }
    // Where histories are kept: the state folder's edit-history/ (KWB_STATE_DIR moves it).
    static QString historyFolder();
    // Tests set CPU mode and smaller counts here; the GUI uses editLoopOptions().
    void setOptions(const kwb::EvaluationOptions& options) { options_ = options; }
    const kwb::EvaluationOptions& options() const { return options_; }

    QAction* verifyOnSaveAction() const { return verifyOnSave_; }
    QWidget* progressWidget() const { return progress_; } // for the status bar
    // "45.0 s, 23.7 s of it evaluating": the wait from request to result, with the evaluator's
    // own total when that is clearly less (a negative wait: not measured).
    static QString tookText(double waitedSeconds, double evaluatorSeconds);
    bool isEvaluating() const { return pending_ != 0; }
    QString progressText() const;

public slots:
    quint64 evaluateNow(); // 0 when no workspace is open
    // Evaluates the workspace once with its profile stage under Nsight Compute (GPU only);
    // countersCollected names the CSV pages. Not kept in the hand-edit history: it measures no
    // speed-up. 0 when no workspace is open.
    quint64 collectCounters(const kwb::CounterCollection& collection);
    void cancel(); // stops the running evaluation; its result shows as cancelled

signals:
    void evaluationShown(quint64 evaluationId);
    void timelineReady(kwb::timeline::TimelineSnapshot timeline);
    // The open workspace's history changed (read, grown by an evaluation, or none: null).
    void historyChanged(kwb::agent::EpisodeSnapshotPtr history);
    // A counters run ended: the details and raw pages, or empty paths and the reason.
    void countersCollected(const QString& detailsCsv, const QString& rawCsv,
                           const QString& problem);
    void message(const QString& text, bool problem);

private:
    void onSaved(const QString& directory, const QString& relativePath);
    void onProgress(quint64 id, const QString& stage);
    void onResult(quint64 id, std::shared_ptr<const kwb::EvaluationResult> result);

    EngineBridge& bridge_;
    AppSettings& settings_;
    QPointer<ResultPanel> results_;
    QString workspace_;
    QString historyFile_;
    agent::EpisodeSnapshotPtr history_;
    kwb::EvaluationOptions options_;
    QAction* verifyOnSave_;
    QPointer<QWidget> progress_; // reparented into a status bar, or ours until then
    QProgressBar* busy_;
    QLabel* stage_;
    QToolButton* cancel_;
    quint64 pending_ = 0;
    // From the request to the result: what the user waited, which the panel and the log both
    // report (the evaluator's own total leaves out the wait for the engine thread and the
    // reading of the files, history and timeline around it).
    QElapsedTimer waited_;
    quint64 countersRun_ = 0; // the pending evaluation collects counters
    int shownCount_ = 0;
};

} // namespace kwb::ui
