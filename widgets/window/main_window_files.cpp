// MainWindow: opening a file by what it holds (the command line, drops, File > Open File…).
#include "agent/store/opened_file.h"
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/window/log_pane.h"
#include "widgets/window/main_window.h"

#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QStatusBar>

namespace kwb::ui {

bool MainWindow::openFile(const QString& path) {
    const agent::OpenedFile opened = agent::classifyOpenedFile(path.toStdString());
    switch (opened.kind) {
    case agent::OpenedFileKind::Task:
        return openTask(path);
    case agent::OpenedFileKind::Workspace:
        return openWorkspace(path);
    case agent::OpenedFileKind::Trace:
        openTrace(path);
        return true;
    case agent::OpenedFileKind::Episodes:
        statusBar()->showMessage(tr("Reading episodes from %1…").arg(QFileInfo(path).fileName()));
        bridge_.requestEpisodesFile(path);
        return true;
    case agent::OpenedFileKind::Unknown:
        break;
    }
    const QString why = QString::fromStdString(opened.why);
    log_->append(LogLevel::Error, tr("Cannot open %1: %2").arg(path, why));
    statusBar()->showMessage(tr("Cannot open %1").arg(QFileInfo(path).fileName()), 8000);
    return false;
}

void MainWindow::openFileFromDialog() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a task, trace or exported episodes"), QString(),
        tr("Workbench files (*.py *.json *.jsonl *.kwbtrace *.kwbepisodes);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::onEpisodesFileRead(const QString& path,
                                    QList<kwb::agent::EpisodeSnapshotPtr> episodes,
                                    const QString& error) {
    const QString name = QFileInfo(path).fileName();
    if (!error.isEmpty() || episodes.isEmpty()) {
        const QString why = error.isEmpty() ? tr("it holds no episodes") : error;
        log_->append(LogLevel::Error, tr("Cannot open the episodes in %1: %2").arg(path, why));
        statusBar()->showMessage(tr("Cannot open %1").arg(name), 8000);
        return;
    }
    agentDock_->show();
    agentDock_->raise();
    agentPanes_->agentPane()->showEpisode(episodes.first());
    log_->append(LogLevel::Info,
                 tr("Opened %n episode(s) from %1 without importing them; the first is shown. "
                    "`kwb episodes import %1` adds them to the store, where the Runs browser "
                    "lists them.",
                    nullptr, int(episodes.size()))
                     .arg(path));
    statusBar()->showMessage(tr("%1: episode %2 of %3 shown")
                                 .arg(name)
                                 .arg(episodes.first()->record.id)
                                 .arg(episodes.size()),
                             8000);
}

} // namespace kwb::ui
