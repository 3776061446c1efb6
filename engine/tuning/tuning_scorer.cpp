#include "engine/tuning/tuning_scorer.h"

#include "engine/service/evaluation_service.h"
#include "engine/workspace/contained_files.h"
#include "engine/workspace/workspace.h"

#include <algorithm>
#include <filesystem>

namespace kwb {
namespace {

namespace fs = std::filesystem;

// Failures of the machinery rather than of the action (a fast-path kernel on a machine with
// no GPU among them): reported, never turned into a reward of -1 that the policy would learn
// from.
bool isInfrastructureFailure(const std::string& kind) {
    return kind == "cancelled" || kind == "harness_failed" || kind == "internal" ||
           kind == "python_missing" || kind == "no_gpu";
}

} // namespace

EvaluationScorer::EvaluationScorer(EvaluationService& service, EvaluationOptions options,
                                   std::string workspaceRoot)
    : service_(service), options_(std::move(options)), workspaceRoot_(std::move(workspaceRoot)) {}

std::string EvaluationScorer::workspaceFor(const TuningSpace& space, std::string* error) {
    if (const auto found = workspaces_.find(space.name); found != workspaces_.end())
        return found->second;
    const std::string folder = (fs::path(workspaceRoot_) / space.name).string();
    WorkspaceInitOptions init;
    init.fastPath = true;
    init.overwrite = true;
    const WorkspaceInitResult made = initWorkspace(space.taskPath, folder, init);
    if (!made.ok) {
        *error = "cannot make the workspace for " + space.name + ": " + made.error;
        return {};
    }
    // The starter's kernels would be compiled beside the template's: only the template's stay.
    for (const std::string& file : regularFilesInside(folder, "kernels"))
        if (std::find(space.files.begin(), space.files.end(), "kernels/" + file) ==
            space.files.end())
            removeFileInside(folder, "kernels/" + file);
    workspaces_[space.name] = made.directory;
    return made.directory;
}

void EvaluationScorer::remember(const TuningSpace& space, const TuningSpace::Action& action,
                                const TuningScore& score) {
    if (score.measured)
        memo_.emplace(space.name + "\n" + space.actionText(action), score);
}

TuningScore EvaluationScorer::score(const TuningSpace& space, const TuningSpace::Action& action,
                                    std::stop_token stop) {
    const std::string key = space.name + "\n" + space.actionText(action);
    if (const auto found = memo_.find(key); found != memo_.end()) {
        TuningScore again = found->second;
        again.reused = true;
        again.seconds = 0;
        again.stageSeconds.clear();
        return again;
    }
    TuningScore score;
    std::string error;
    const std::string workspace = workspaceFor(space, &error);
    if (workspace.empty()) {
        score.error = error;
        return score;
    }
    const auto files = space.render(action, &error);
    if (!files) {
        score.error = error;
        return score;
    }
    for (const auto& [path, content] : *files)
        if (!writeFileInside(workspace, path, content, &error)) {
            score.error = "cannot write " + path + ": " + error;
            return score;
        }
    EvaluationRequest request{EvaluationTarget::forWorkspace(workspace), options_,
                              "tuning:" + space.name};
    const EvaluationSnapshot result = service_.evaluate(std::move(request), {}, stop);
    if (!result) {
        score.error = "the evaluation service returned nothing";
        return score;
    }
    score.seconds = result->totalSeconds;
    double starts = 0;
    for (const StageRecord& stage : result->stages)
        if (stage.status != StageStatus::NotRun) {
            score.stageSeconds[stage.name] = stage.seconds;
            starts += stage.startSeconds;
        }
    score.stageSeconds["of_which_starts"] = starts; // processes, sandboxes, lanes
    score.stageSeconds["other"] = std::max(0.0, result->totalSeconds - result->stageSeconds());
    score.verdict = result->verdict();
    if (isInfrastructureFailure(result->failureKind)) {
        score.error = result->failureKind + ": " + result->failureMessage;
        return score;
    }
    score.measured = true;
    score.reward = result->reward;
    score.correct = result->correct;
    score.speedupVsEager = result->speedupVsEager;
    score.speedupVsCompile = result->speedupVsCompile;
    memo_[key] = score;
    return score;
}

} // namespace kwb
