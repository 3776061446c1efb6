#include "widgets/core/workbench_context.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace kwb::ui {
namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("WorkbenchContext", text);
}

} // namespace

WorkbenchContext WorkbenchContext::task(const QString& path) {
    WorkbenchContext context;
    context.kind = Kind::Task;
    context.taskPath = path;
    return context;
}

WorkbenchContext WorkbenchContext::ofWorkspace(const QString& folder) {
    WorkbenchContext context;
    context.kind = Kind::Workspace;
    context.workspace = folder;
    context.taskPath = folder + QStringLiteral("/model.py");
    return context;
}

WorkbenchContext WorkbenchContext::episode(qint64 id, const QString& taskPath, bool live) {
    WorkbenchContext context;
    context.kind = Kind::Episode;
    context.episodeId = id;
    context.taskPath = taskPath;
    context.live = live;
    context.following = live;
    return context;
}

bool WorkbenchContext::sameTarget(const WorkbenchContext& other) const {
    if (kind != other.kind)
        return false;
    switch (kind) {
    case Kind::None:
        return true;
    case Kind::Task:
        return taskPath == other.taskPath;
    case Kind::Workspace:
        return workspace == other.workspace;
    case Kind::Episode:
        return episodeId == other.episodeId;
    }
    return false;
}

QString WorkbenchContext::describe() const {
    switch (kind) {
    case Kind::None:
        return tr("Nothing open");
    case Kind::Task:
        return tr("Task %1").arg(QFileInfo(taskPath).fileName());
    case Kind::Workspace: {
        const QString name = QFileInfo(workspace).fileName();
        return step > 0 ? tr("Workspace %1 · hand-edit history, step %2").arg(name).arg(step)
                        : tr("Workspace %1 · your files").arg(name);
    }
    case Kind::Episode: {
        QString text = episodeId > 0 ? tr("Episode %1").arg(episodeId) : tr("New episode");
        if (live)
            text += following ? tr(" · live, following the agent") : tr(" · live");
        if (step > 0 && !following)
            text += tr(" · step %1").arg(step);
        return text;
    }
    }
    return {};
}

} // namespace kwb::ui
