#pragma once

#include "engine/tuning/local_policy.h"
#include "engine/tuning/tuning_scorer.h"
#include "engine/tuning/tuning_space.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace kwb {

// A local RL run on kernel-tuning spaces (issue 18's item 5): the policy writes an action per
// sample, the scorer measures it, GRPO updates the policy. Before training and after it, the
// policy is sampled on the training spaces and on held-out ones it never trains on, beside a
// baseline that picks every knob uniformly at random, so the run says whether it learned.
struct TuningRunConfig {
    std::vector<std::string> trainSpaces;   // names under spacesDirectory
    std::vector<std::string> heldOutSpaces; // evaluated, never trained on
    std::string spacesDirectory;            // empty: resources/tuning
    int steps = 12;
    // Training stops starting steps once this many seconds have passed since the run began
    // (0: no limit), so that a run on a lent GPU keeps time for its final evaluation.
    double trainingSeconds = 0;
    int samplesPerSpace = 8;    // a GRPO group per training space and step
    int evaluationSamples = 16; // per space, before and after training and for the baseline
    double temperature = 1.0;   // sampling; 1 keeps the log-probabilities the policy's own
    // The training reward: the milestone reward plus speedBonus * log2(speed-up), the log
    // clamped to [-1, 1], for correct candidates, so that among equally rewarded kernels the
    // faster earns more. 0: the milestone reward alone.
    double speedBonus = 0.5;
    int epochs = 1;
    double klCoefficient = 0.0;
    double clipLow = 0.2, clipHigh = 0.28;
    std::uint64_t seed = 1;
    LocalPolicyOptions policy;
    // How each action is timed: "quick" (the hand-edit loop's quick feedback: a tuning run tries
    // many settings of one kernel, as a person editing it does) or "rl" (the rollouts' profile).
    std::string timing = "quick";
    // How the start, random and final phases' actions are timed ("quick" or "rl"; empty: as
    // `timing`). Those phases decide whether the run learned, and one quick measurement of a
    // kernel near a milestone's 5 % threshold can fall either side of it: "rl" measures until the
    // speed-up's interval clears the threshold (within its budget). Measured apart from the
    // training groups, so no phase reuses a quick measurement.
    std::string phaseTiming;
    // The phases' timing in effect: phaseTiming, else timing.
    const std::string& phasesTiming() const { return phaseTiming.empty() ? timing : phaseTiming; }
    // Warm workers prepare the next evaluation of a workspace while the policy samples; the run
    // scores a space's group back to back, so the preparation is mostly used.
    bool standby = true;
    // Distinct actions of a group measured at once (each in its own workspace). The GPU's timed
    // stages still take turns; 1 measures one action after another.
    int parallelEvaluations = 1;
    static constexpr int kMaxParallelEvaluations = 16;
    std::string out; // the run's folder: config.json, samples.jsonl, steps.jsonl, summary.json
    bool saveModel = false; // the trained model as a Hugging Face folder in out/model
    // Continue the run in `out` (not a setting of the file: the command line's --resume): the
    // measured actions come back from samples.jsonl (none is measured twice), the phases take
    // only the samples they lack, training continues after the last step in steps.jsonl from
    // out/checkpoint.pt, and the final phase runs again with the policy as it is then.
    bool resume = false;

    // From a JSON file's object; nullopt with `error` naming the bad field.
    static std::optional<TuningRunConfig> fromJson(const nlohmann::json& json, std::string* error);
    nlohmann::json toJson() const;
};

double trainingReward(const TuningScore& score, double speedBonus);

// The evaluation options a run scores with: its timing (the phases' timing with `forPhases`) and
// standby settings on the device given.
EvaluationOptions tuningEvaluationOptions(const TuningRunConfig& config, DeviceChoice device,
                                          bool forPhases = false);
// Whether the phases are timed otherwise than the training groups (and need a scorer of their own).
bool phasesTimedApart(const TuningRunConfig& config);

struct TuningRunOutcome {
    std::string error; // empty when the run finished or was stopped
    bool stopped = false;
    nlohmann::json summary;
};

// Events as the run goes (phase starts, each step's figures, the summary), for a console or a
// view; called on the run's thread.
using TuningRunObserver = std::function<void(const nlohmann::json& event)>;

// Runs the whole schedule with a started policy and a scorer; writes the run's folder as it
// goes, so a stopped or failed run keeps every sample and step it finished.
// `phaseScorer` scores the start, random and final phases, `scorer` the training groups (the
// same one where the phases are not timed apart).
TuningRunOutcome runKernelTuning(const TuningRunConfig& config,
                                 const std::vector<TuningSpace>& train,
                                 const std::vector<TuningSpace>& heldOut, LocalPolicy& policy,
                                 TuningScorer& scorer, TuningScorer& phaseScorer,
                                 const TuningRunObserver& observer, std::stop_token stop);
TuningRunOutcome runKernelTuning(const TuningRunConfig& config,
                                 const std::vector<TuningSpace>& train,
                                 const std::vector<TuningSpace>& heldOut, LocalPolicy& policy,
                                 TuningScorer& scorer, const TuningRunObserver& observer,
                                 std::stop_token stop);

} // namespace kwb
