#pragma once

#include <QString>

namespace kwb::ui {

// What the workbench is looking at, RenderDoc's "current event": a task, a workspace (with its
// hand-edit history), or an agent episode, at a step when one is selected. Every pane shows this
// context or says that it shows something else; SelectionHub owns the one current value.
struct WorkbenchContext {
    enum class Kind { None, Task, Workspace, Episode };

    Kind kind = Kind::None;
    QString taskPath;  // the reference's task file (Task; an episode's task when known)
    QString workspace; // Workspace: its folder
    qint64 episodeId = 0;
    qint64 step = -1; // the selected step of the episode or history; -1: none (the newest)
    // The episode is running in this workbench, and the editors and result panel move to each
    // step the agent takes until the user selects another step or leaves the agent.
    bool live = false;
    bool following = false;

    static WorkbenchContext task(const QString& path);
    static WorkbenchContext ofWorkspace(const QString& folder);
    static WorkbenchContext episode(qint64 id, const QString& taskPath, bool live);

    bool sameTarget(const WorkbenchContext& other) const; // the same task, workspace or episode
    // One line for the status bar: "Episode 7 · step 12", "Workspace gelu · hand edits", ...
    QString describe() const;

    bool operator==(const WorkbenchContext&) const = default;
};

} // namespace kwb::ui
