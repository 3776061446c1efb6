#pragma once

#include "agent/store/episode_record.h"
#include "engine/workspace/workspace_files.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace kwb::agent {

// The hand-edit loop's history of one workspace: every evaluation the user ran from the
// editors, kept with the files it judged, one JSON line each in a file outside the workspace
// (the candidate cannot rewrite its own history). Read back, it is an episode (provider
// "hand-edit", id kEditHistoryEpisodeId) of FileDiff and Evaluation events, so the reward plot,
// the step files and the compare views treat a person's edits exactly like an agent's steps.
// It never enters the trajectory store: hand edits are not rollouts and are never exported as
// training data by accident.

inline constexpr EpisodeId kEditHistoryEpisodeId = -1;
inline constexpr const char* kEditHistoryProvider = "hand-edit";

// The history file of `workspace` inside `historyFolder`: named by a hash of the workspace's
// absolute path, so two workspaces never share one and a moved workspace starts afresh.
std::string editHistoryFile(const std::string& historyFolder, const std::string& workspace);

// Appends one evaluation (an EvaluationResult's toJson()) with the files it judged, as one line
// written with a single append: a crash leaves at most a torn last line, which reading skips.
// The folder is made when missing. False with the reason in `error` when it cannot be written.
bool appendEditHistory(const std::string& file, const std::string& workspace,
                       const WorkspaceFiles& files, const nlohmann::json& evaluation,
                       const std::string& timestamp, std::string* error = nullptr);

struct EditHistory {
    EpisodeTrajectory trajectory; // no events when there is no history yet
    int evaluations = 0;
    int skippedLines = 0; // torn, foreign or unreadable lines, left out
    std::string error;    // the file exists but cannot be read at all
};

// The history as an episode: the first evaluation's files as the start (FileDiff events marked
// "initial"), then per evaluation the files that changed since the previous one and the
// evaluation itself. Lines of another workspace (a hash collision) are skipped.
EditHistory readEditHistory(const std::string& file, const std::string& workspace);

// Reads one history as it grows. Each read() parses and diffs only the lines appended since the
// previous read, so refreshing the Rewards plot after an evaluation costs that evaluation, not
// every evaluation before it. A file that was replaced, truncated or removed is read again from
// its start. An unterminated last line (a write torn by a crash) is skipped but not consumed:
// the next append ends it, and it is then counted once as a skipped line. Not thread-safe: one
// owner reads at a time.
class EditHistoryReader {
public:
    EditHistoryReader(std::string file, std::string workspace);

    EditHistory read();
    // Bytes of complete lines consumed so far (for tests and diagnostics).
    std::uint64_t consumedBytes() const { return consumed_; }

private:
    void restart();
    void takeLine(const std::string& text);

    std::string file_, owner_;
    EditHistory history_;     // everything consumed so far
    WorkspaceFiles previous_; // the files of the last evaluation consumed
    std::uint64_t consumed_ = 0;
    std::uint64_t device_ = 0, inode_ = 0; // which file was consumed
};

} // namespace kwb::agent
