#include "engine/evaluation/judge_failure.h"

#include "engine/evaluation/evaluator.h"
#include "engine/evaluation/failure_kinds.h"

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kwb {
namespace {

// The stages whose judge could have been provoked and whose failure sets the evaluation's kind:
// the build loads the candidate's extension, verify runs its forward. (A profile that fails is
// a warning on a correct candidate, which keeps reward 1 and earns no speed reward: nothing to
// gain there. Inspect runs the reference alone.) "": a stage wrote a result kwb could not read,
// and the evaluation kept no stage to say which (the compile stage's child, where the
// candidate's extension runs, can write its result file).
bool settledByControl(const std::string& stage) {
    return stage == "compile" || stage == "verify" || stage.empty();
}

// Failures no candidate can provoke: the task Python lacks torch; the reference ran out of
// memory (verify computes every reference output before the candidate is imported, so the memory
// was other evaluations').
bool beyondTheCandidate(const std::string& kind) {
    return kind == "python_missing" || kind == "task_out_of_memory";
}

} // namespace

std::string failedStage(const EvaluationResult& r) {
    for (auto it = r.stages.rbegin(); it != r.stages.rend(); ++it)
        if (it->status == StageStatus::Failed)
            return it->name;
    return {};
}

bool judgeFailedAfterCandidateCode(const EvaluationResult& r) {
    return isInfrastructureFailure(r.failureKind) && !beyondTheCandidate(r.failureKind) &&
           settledByControl(failedStage(r));
}

bool writeControlTarget(const EvaluationTarget& target, const fs::path& folder,
                        EvaluationTarget& control, std::string& error) {
    std::ifstream in(target.referencePath, std::ios::binary);
    std::ostringstream source;
    if (!in || !(source << in.rdbuf())) {
        error = "cannot read the reference " + target.referencePath;
        return false;
    }
    std::error_code ec;
    fs::create_directories(folder, ec);
    const fs::path candidate = folder / "control_model_new.py";
    std::ofstream out(candidate, std::ios::binary | std::ios::trunc);
    // The task's own module, whose Model is the candidate: what the judge must pass.
    out << source.str()
        << "\n\n# kwb: the reference in the candidate's place (a control of the judge)\n"
           "class ModelNew(Model):\n    pass\n";
    if (!out.flush()) {
        error = "cannot write " + candidate.string();
        return false;
    }
    control = EvaluationTarget::forPair(target.referencePath, candidate.string());
    return true;
}

void settleJudgeFailure(EvaluationResult& again, const EvaluationResult& control) {
    const std::string stage = failedStage(again);
    const std::string where = stage.empty() ? "a stage" : stage;
    const StageRecord* controlStage = stage.empty() ? nullptr : control.stage(stage);
    // The control passed where the candidate's judge failed: through that stage (a build with
    // nothing to build is skipped), or, when the failed stage is not known, with no failure of
    // the evaluator's anywhere.
    const bool controlPassed = stage.empty()
                                   ? !isInfrastructureFailure(control.failureKind)
                                   : controlStage && (controlStage->status == StageStatus::Passed ||
                                                      controlStage->status == StageStatus::Skipped);
    const std::string first = again.failureKind + ": " + again.failureMessage;
    if (controlPassed) {
        again.failureKind = "judge_failed_on_candidate";
        again.failureMessage = "the judge failed in " + where + " on this candidate twice (" +
                               first +
                               ") and passed the task's reference in its place: the candidate "
                               "is charged with the failure";
        return;
    }
    again.failureMessage += controlStage || stage.empty()
                                ? " (the task's reference in the candidate's place failed in " +
                                      where + " too: " + control.failureKind + ")"
                                : " (the task's reference in the candidate's place did not reach " +
                                      stage + ": " + control.failureKind + ")";
}

} // namespace kwb
