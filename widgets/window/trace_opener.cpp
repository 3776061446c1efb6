#include "widgets/window/trace_opener.h"

#include "widgets/core/app_settings.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/timeline/timeline_pane.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMenu>

namespace kwb::ui {

TraceOpener::TraceOpener(EngineBridge& bridge, TimelinePane& pane, AppSettings& settings,
                         QWidget* dialogParent)
    : QObject(dialogParent), bridge_(bridge), pane_(pane), settings_(settings),
      dialogParent_(dialogParent) {
    openAction_ = new QAction(tr("Open &Trace…"), this);
    openAction_->setShortcut(QKeySequence(tr("Ctrl+Shift+T")));
    openAction_->setToolTip(tr("Open a kwb-cupti record file or a Chrome/Perfetto JSON trace"));
    connect(openAction_, &QAction::triggered, this, &TraceOpener::openFromDialog);
    recentMenu_ = new QMenu(tr("Recent T&races"), dialogParent);
    rebuildRecentMenu();

    connect(&bridge_, &EngineBridge::traceFileProgress, this,
            [this](const QString& path, qint64 done, qint64 total) {
                if (path == loading_)
                    pane_.setLoadingProgress(done, total);
            });
    connect(&bridge_, &EngineBridge::traceFileLoaded, this, &TraceOpener::showResult);
    connect(&pane_, &TimelinePane::loadCancelRequested, this, &TraceOpener::cancel);
}

void TraceOpener::cancel() {
    if (loading_.isEmpty())
        return;
    // The pane goes back at once; the engine thread stops at its next block, and its late
    // outcome (even a finished load) is dropped, since nothing is loading any more.
    const QString path = loading_;
    loading_.clear();
    bridge_.cancelTraceFile();
    pane_.endLoading();
    emit message(tr("Stopped opening %1").arg(path), false);
    emit finished(path, false);
}

void TraceOpener::openFromDialog() {
    const QStringList recent = settings_.recentTraces();
    const QString start = recent.isEmpty() ? QString() : QFileInfo(recent.first()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        dialogParent_, tr("Open Trace"), start,
        tr("Traces (*.json *.jsonl *.records *.trace);;All files (*)"));
    if (!path.isEmpty())
        open(path);
}

void TraceOpener::open(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    loading_ = absolute;
    emit showTimelineRequested();
    pane_.showLoading(QFileInfo(absolute).fileName());
    bridge_.requestTraceFile(absolute);
}

void TraceOpener::showResult(const QString& path,
                             std::shared_ptr<const kwb::timeline::LoadedTrace> trace) {
    if (path != loading_ || !trace)
        return;
    loading_.clear();
    const QString name = QFileInfo(path).fileName();
    if (trace->cancelled) { // stopped by a newer request of the bridge's, not by Cancel
        pane_.endLoading();
        emit finished(path, false);
        return;
    }
    if (!trace->timeline) {
        const QString why = QString::fromStdString(trace->error);
        pane_.showLoadFailure(tr("Cannot open %1").arg(name), why);
        emit message(tr("Cannot open the trace: %1").arg(why), true);
        emit finished(path, false);
        return;
    }
    const auto& timeline = *trace->timeline;
    if (timeline.streams.empty() && timeline.ranges.empty()) {
        pane_.showLoadFailure(tr("%1 holds no timeline").arg(name),
                              tr("No kernels, copies or ranges were found in it (%1).")
                                  .arg(QString::fromStdString(toString(trace->format))));
        emit message(tr("%1 holds no kernels, copies or ranges").arg(path), true);
        emit finished(path, false);
        return;
    }
    pane_.setTimeline(trace->timeline);
    pane_.setSource(name);
    settings_.addRecentTrace(path);
    rebuildRecentMenu();
    const QLocale locale;
    QString text = tr("Opened %1 (%2): %3 kernels, %4 events")
                       .arg(path, QString::fromStdString(toString(trace->format)),
                            locale.toString(static_cast<qulonglong>(timeline.kernelCount)),
                            locale.toString(static_cast<qulonglong>(trace->records)));
    if (trace->malformed > 0)
        text += tr("; %1 lines were not records").arg(trace->malformed);
    if (trace->format == kwb::timeline::TraceFormat::CuptiRecords && !trace->sawEnd)
        text += tr("; the file has no end record (its writer was cut off?)");
    emit message(text, trace->malformed > 0);
    emit finished(path, true);
}

void TraceOpener::rebuildRecentMenu() {
    recentMenu_->clear();
    const QStringList recent = settings_.recentTraces();
    for (const QString& path : recent) {
        QAction* action = recentMenu_->addAction(QFileInfo(path).fileName());
        action->setToolTip(path);
        action->setStatusTip(path);
        connect(action, &QAction::triggered, this, [this, path] { open(path); });
    }
    if (recent.isEmpty()) {
        recentMenu_->addAction(tr("(none yet)"))->setEnabled(false);
        return;
    }
    recentMenu_->addSeparator();
    recentMenu_->addAction(tr("Clear Recent Traces"), this, [this] {
        settings_.clearRecentTraces();
        rebuildRecentMenu();
    });
}

} // namespace kwb::ui
