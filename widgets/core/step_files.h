#pragma once

#include "agent/store/episode_snapshot.h"

#include <QString>
#include <map>
#include <utility>
#include <vector>

namespace kwb::ui {

// The workspace's files as they stood after one step of an episode. Every FileDiff event carries
// the changed file's whole text after the change (the episode's first events record the files
// it started from), so folding them in sequence order rebuilds any step.
struct StepFiles {
    qint64 step = 0;
    std::map<QString, QString> files; // relative path -> text; deleted files are absent
    // False for episodes recorded before FileDiff events carried whole texts: only their diffs
    // exist, and the files cannot be rebuilt.
    bool complete = true;
};

// Sequence 0 (or less) is the episode's start: the files its first events recorded.
StepFiles filesAfterStep(const agent::EpisodeSnapshot& episode, qint64 sequence);

// What a step can be compared with: the episode's start (sequence 0) and every evaluation before
// it, newest first, each with a label for a picker ("step 12: evaluation, reward 3").
struct ComparableStep {
    qint64 sequence = 0;
    QString label;
};
std::vector<ComparableStep> comparableSteps(const agent::EpisodeSnapshot& episode, qint64 sequence);

// The two sides of a diff view: every file that differs between the two steps, in path order,
// each headed by a line with its path. Empty strings when nothing differs.
std::pair<QString, QString> joinedDifferences(const StepFiles& before, const StepFiles& after);

// Writes the files into `directory` (created, emptied first) so the editors can show a step like
// any candidate folder. Paths that would leave the folder are refused. False with a reason in
// `error` when a file cannot be written.
bool writeStepFiles(const StepFiles& files, const QString& directory, QString* error = nullptr);

} // namespace kwb::ui
