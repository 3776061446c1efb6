#include "widgets/window/edit_loop_controller.h"

#include "agent/store/edit_history.h"
#include "engine/evaluation/evaluation_profile.h"
#include "engine/system/user_directories.h"
#include "widgets/core/app_settings.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/editors/candidate_editors.h"
#include "widgets/result/result_panel.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

namespace kwb::ui {

kwb::EvaluationOptions EditLoopController::editLoopOptions() {
    kwb::EvaluationOptions o;
    o.device = kwb::DeviceChoice::Auto;
    kwb::applyQuickFeedback(o);
    return o;
}

EditLoopController::EditLoopController(EngineBridge& bridge, AppSettings& settings,
                                       CandidateEditors* editors, ResultPanel* results,
                                       QObject* parent)
    : QObject(parent), bridge_(bridge), settings_(settings), results_(results),
      options_(editLoopOptions()), verifyOnSave_(new QAction(tr("&Verify on Save"), this)),
      progress_(new QWidget), busy_(new QProgressBar(progress_)), stage_(new QLabel(progress_)),
      cancel_(new QToolButton(progress_)) {
    verifyOnSave_->setCheckable(true);
    verifyOnSave_->setChecked(settings_.verifyOnSave());
    verifyOnSave_->setToolTip(
        tr("Ctrl+S in a candidate file also compiles, verifies and times the workspace"));
    connect(verifyOnSave_, &QAction::toggled, this,
            [this](bool on) { settings_.setVerifyOnSave(on); });

    // An indeterminate bar: stages take unknown time, the label names the running one.
    busy_->setRange(0, 0);
    busy_->setMaximumWidth(120);
    busy_->setMaximumHeight(14);
    auto* layout = new QHBoxLayout(progress_);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(stage_);
    layout->addWidget(busy_);
    cancel_->setText(tr("Cancel"));
    cancel_->setToolTip(tr("Stop this evaluation (a CUDA-Agent workspace's build can take "
                           "minutes on a CPU)"));
    cancel_->setAutoRaise(true);
    layout->addWidget(cancel_);
    connect(cancel_, &QToolButton::clicked, this, &EditLoopController::cancel);
    progress_->hide();

    connect(editors, &CandidateEditors::fileSaved, this, &EditLoopController::onSaved);
    connect(editors, &CandidateEditors::saveFailed, this,
            [this](const QString& reason) { emit message(reason, true); });
    connect(&bridge_, &EngineBridge::evaluationProgress, this, &EditLoopController::onProgress);
    connect(&bridge_, &EngineBridge::evaluationReady, this, &EditLoopController::onResult);
    connect(&bridge_, &EngineBridge::evaluationTimelineReady, this,
            [this](quint64, kwb::timeline::TimelineSnapshot timeline) {
                emit timelineReady(std::move(timeline));
            });
    connect(&bridge_, &EngineBridge::editHistoryReady, this,
            [this](const QString& workspace, agent::EpisodeSnapshotPtr history,
                   const QString& problem) {
                if (workspace != workspace_)
                    return; // a workspace closed since
                history_ = std::move(history);
                if (!problem.isEmpty())
                    emit message(tr("Hand-edit history: %1").arg(problem), true);
                emit historyChanged(history_);
            });
}

EditLoopController::~EditLoopController() {
    if (progress_ && !progress_->parent())
        delete progress_.data();
}

QString EditLoopController::historyFolder() {
    return QString::fromStdString(kwb::stateDirectory()) + QStringLiteral("/edit-history");
}

void EditLoopController::setWorkspace(const QString& directory) {
    if (directory == workspace_)
        return;
    workspace_ = directory;
    history_.reset();
    historyFile_.clear();
    emit historyChanged(history_);
    if (workspace_.isEmpty())
        return;
    historyFile_ = QString::fromStdString(
        agent::editHistoryFile(historyFolder().toStdString(), workspace_.toStdString()));
    bridge_.requestEditHistory(workspace_, historyFile_);
}

QString EditLoopController::progressText() const {
    return progress_->isHidden() ? QString() : stage_->text();
}

void EditLoopController::onSaved(const QString& directory, const QString& relativePath) {
    emit message(tr("Saved %1").arg(relativePath), false);
    if (!verifyOnSave_->isChecked() || workspace_.isEmpty())
        return;
    if (QFileInfo(directory).canonicalFilePath() != QFileInfo(workspace_).canonicalFilePath())
        return;
    evaluateNow();
}

QString EditLoopController::tookText(double waitedSeconds, double evaluatorSeconds) {
    if (waitedSeconds < 0)
        return tr("%1 s").arg(evaluatorSeconds, 0, 'f', 1);
    // The same figure in the panel and the log; the evaluator's own when it is clearly less.
    if (waitedSeconds - evaluatorSeconds < 1.0)
        return tr("%1 s").arg(waitedSeconds, 0, 'f', 1);
    return tr("%1 s, %2 s of it evaluating")
        .arg(waitedSeconds, 0, 'f', 1)
        .arg(evaluatorSeconds, 0, 'f', 1);
}

quint64 EditLoopController::evaluateNow() {
    if (workspace_.isEmpty())
        return 0;
    pending_ = bridge_.requestEvaluation(workspace_, options_, settings_.pythonInterpreter(),
                                         historyFile_);
    waited_.start();
    stage_->setText(tr("Evaluating…"));
    progress_->show();
    if (results_)
        results_->showRunning(tr("queued"));
    return pending_;
}

quint64 EditLoopController::collectCounters(const kwb::CounterCollection& collection) {
    if (workspace_.isEmpty())
        return 0;
    kwb::EvaluationOptions options = options_;
    options.counters = collection;
    pending_ = bridge_.requestEvaluation(workspace_, options, settings_.pythonInterpreter());
    waited_.start();
    countersRun_ = pending_;
    stage_->setText(tr("Collecting counters…"));
    progress_->show();
    if (results_)
        results_->showRunning(tr("queued (counters)"));
    return pending_;
}

void EditLoopController::cancel() {
    if (pending_ == 0)
        return;
    stage_->setText(tr("Cancelling…"));
    bridge_.cancelEvaluation();
}

void EditLoopController::onProgress(quint64 id, const QString& stage) {
    if (id != pending_)
        return;
    stage_->setText(tr("Evaluating: %1").arg(stage));
    if (results_)
        results_->showRunning(stage);
}

void EditLoopController::onResult(quint64 id, std::shared_ptr<const kwb::EvaluationResult> result) {
    if (id != pending_)
        return; // an evaluation someone else asked the bridge for
    pending_ = 0;
    const bool counters = id == countersRun_;
    countersRun_ = 0;
    if (counters) {
        QString problem;
        for (const auto& flag : result->flags)
            if (flag.code == "counters_unavailable" || flag.code == "counters_failed")
                problem = QString::fromStdString(flag.reason);
        if (result->countersDetailsPath.empty() && problem.isEmpty())
            problem = result->failureKind.empty()
                          ? tr("the evaluation collected none")
                          : QString::fromStdString(result->verdict()); // failed before profiling
        emit countersCollected(QString::fromStdString(result->countersDetailsPath),
                               QString::fromStdString(result->countersRawPath), problem);
    }
    progress_->hide();
    if (result->failureKind == "cancelled") {
        // Nothing was judged: the panel goes back to what it showed before the run.
        if (results_)
            results_->showRunning({});
        emit message(tr("Evaluation cancelled"), false);
        emit evaluationShown(id);
        return;
    }
    ++shownCount_;
    const QString took =
        tookText(waited_.isValid() ? waited_.elapsed() / 1000.0 : -1.0, result->totalSeconds);
    if (results_) {
        results_->showRunning({});
        results_->showLiveEvaluation(result, tr("Evaluation %1 of %2 (%3)")
                                                 .arg(shownCount_)
                                                 .arg(QDir::toNativeSeparators(workspace_))
                                                 .arg(took));
    }
    emit message(tr("Evaluation: %1 (%2)").arg(QString::fromStdString(result->verdict()), took),
                 !result->failureKind.empty() && result->failureKind != "no_gpu");
    emit evaluationShown(id);
}

} // namespace kwb::ui
