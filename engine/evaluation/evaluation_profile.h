#pragma once

#include <optional>
#include <string>

namespace kwb {

struct EvaluationOptions;

// Whose rules an evaluation follows: its tolerances, how many checks and how it times. Chosen per
// call and recorded in the result, so that rewards are only compared under the same rules.
enum class EvaluationProfile {
    // CUDA Agent's verification (atol = rtol = 1e-2, five checks) and its milestones; timing in
    // interleaved rounds until stable. The default for workspaces.
    CudaAgent,
    // KernelBench's eval_kernel_against_ref: a tolerance per precision
    // (get_tolerance_for_precision:
    // 1e-4 for float32, 1e-2 for float16 and bfloat16, as both atol and rtol), five correctness
    // trials, 100 timed trials after warm-up with an L2 flush between them. The default for
    // KernelBench file pairs.
    KernelBench,
    // Rollouts: CUDA Agent's verdict rules and every integrity check, with fewer checks and a
    // smaller timing budget, so that more evaluations fit in a GPU-minute.
    Rl,
};

std::string toString(EvaluationProfile profile); // "cuda-agent", "kernelbench", "rl"
std::optional<EvaluationProfile> evaluationProfileFrom(const std::string& name);

// Sets what the profile decides in `options` (and records the profile there); a caller that
// sets an option explicitly afterwards overrides the profile's value.
void applyEvaluationProfile(EvaluationOptions& options, EvaluationProfile profile);
// Default options with the rl profile applied: what rollouts evaluate with.
EvaluationOptions rlEvaluationOptions();

// The quick-feedback settings a caller has set itself and keeps.
struct QuickFeedbackKeeps {
    bool checks = false;
    bool maxRounds = false;
    bool timingBudget = false;
    bool targetCv = false;
};

// Quick feedback, for a person editing a kernel and for a tuning run trying many settings of
// one: at most 3 checks and 5 timing rounds, a 3 s timing budget and a 5% stability target, in
// warm workers. On the fast path a result then comes in under a second on an H200
// (bench/results/2026-11-30-h200-instant-loop-final.md). The result records its profile as
// modified, so its figures are not mistaken for the profile's own.
void applyQuickFeedback(EvaluationOptions& options, QuickFeedbackKeeps keep = {});

} // namespace kwb
