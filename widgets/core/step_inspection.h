#pragma once

#include "agent/store/episode_snapshot.h"
#include "engine/evaluation/evaluation_result.h"

#include <QString>
#include <memory>

namespace kwb::ui {

// What the panes show for one selected agent step: its evaluation record (Evaluation events) and
// the unified diffs (FileDiff events) that led to it. The files themselves are rebuilt by
// step_files.h.
struct StepInspection {
    bool found = false; // the episode has an event with that sequence
    std::shared_ptr<const kwb::EvaluationResult> evaluation;         // the step is an evaluation
    std::shared_ptr<const kwb::EvaluationResult> previousEvaluation; // the one before it
    // The diffs recorded after the previous evaluation up to this step (for a FileDiff step:
    // just its own), each headed by its path. Empty when the step changed no file.
    QString changes;
    int changedFiles = 0;
};

StepInspection inspectStep(const agent::EpisodeSnapshot& episode, qint64 sequence);

} // namespace kwb::ui
