#pragma once

#include "engine/timeline/trace_file.h"

#include <QObject>
#include <QString>
#include <memory>

class QAction;
class QMenu;
class QWidget;

namespace kwb::ui {

class AppSettings;
class EngineBridge;
class TimelinePane;

// Opening trace files into the timeline dock: File > Open Trace…, the Recent Traces menu,
// files dropped on the window and `--trace FILE`. The file loads on the engine thread with
// progress and Cancel in the pane; the outcome (its counts, or why it could not be read) goes
// to the log and the status bar.
class TraceOpener : public QObject {
    Q_OBJECT
public:
    TraceOpener(EngineBridge& bridge, TimelinePane& pane, AppSettings& settings,
                QWidget* dialogParent);

    QAction* openAction() const { return openAction_; }
    QMenu* recentMenu() const { return recentMenu_; }
    // The file being opened, or empty.
    QString loadingPath() const { return loading_; }

public slots:
    void open(const QString& path);
    void openFromDialog();
    // Stops the load in progress; the pane shows what it showed before.
    void cancel();

signals:
    // Shows the timeline dock, so the load's progress is seen.
    void showTimelineRequested();
    // A line for the log and the status bar: what was opened, or why not.
    void message(const QString& text, bool problem);
    // After every outcome (opened, failed, cancelled): tests and screenshots wait on it.
    void finished(const QString& path, bool opened);

private:
    void showResult(const QString& path, std::shared_ptr<const kwb::timeline::LoadedTrace> trace);
    void rebuildRecentMenu();

    EngineBridge& bridge_;
    TimelinePane& pane_;
    AppSettings& settings_;
    QWidget* dialogParent_;
    QAction* openAction_;
    QMenu* recentMenu_;
    QString loading_;
};

} // namespace kwb::ui
