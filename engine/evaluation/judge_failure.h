#pragma once

#include "engine/evaluation/evaluation_result.h"

#include <filesystem>
#include <string>

namespace kwb {

struct EvaluationTarget;

// Who a judge's failure belongs to. An evaluation that fails in the judge (an internal error,
// no result, the reference out of memory) judged nothing, so it scores no reward: but in a stage
// that ran candidate code, the candidate may have provoked it (a bad candidate would rather be
// "not scored" than -1, and a policy can learn what gets it there). Such a failure is settled by
// evaluating the candidate again and, if the judge fails again, the task's own reference in the
// candidate's place (the control): a judge that fails on the candidate twice and works on the
// control charges the candidate (kind judge_failed_on_candidate, reward -1); a control that fails
// too leaves it the evaluator's.

// The evaluation failed in the judge after candidate code ran (a stage other than inspect and
// baseline): its failure needs settling.
bool judgeFailedAfterCandidateCode(const EvaluationResult& r);

// Writes the control candidate (the reference's source with ModelNew as its Model) into
// `folder` and returns the pair that evaluates it against the same reference; `error` says why
// it could not.
bool writeControlTarget(const EvaluationTarget& target, const std::filesystem::path& folder,
                        EvaluationTarget& control, std::string& error);

// The stage whose failure ended the evaluation ("" when none did).
std::string failedStage(const EvaluationResult& r);

// Settles `again` (the candidate's second evaluation, whose judge failed too) by the control's
// result: charged to the candidate when the control passed the stage that failed; left the
// evaluator's otherwise. The message says which and why.
void settleJudgeFailure(EvaluationResult& again, const EvaluationResult& control);

} // namespace kwb
