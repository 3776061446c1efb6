#pragma once

#include "engine/evaluation/evaluator.h"
#include "engine/tuning/tuning_space.h"

#include <map>
#include <mutex>
#include <stop_token>
#include <string>

namespace kwb {

class EvaluationService;

// What one action earned.
struct TuningScore {
    bool measured = false; // false: infrastructure failed (see error); no reward to train on
    std::string error;
    int reward = -1; // the milestone reward (-1 .. 3)
    bool correct = false;
    double speedupVsEager = 0.0;
    double speedupVsCompile = 0.0;
    std::string verdict;  // "correct, 1.42x vs eager" / "compile failed: ..."
    bool reused = false;  // the same rendered action was measured earlier in this run
    double seconds = 0.0; // the evaluation's wall time (0 when reused)
    // Where that time went: each stage's seconds, "other" for the engine's own time, and
    // "of_which_starts" for the part of the stages' seconds spent before or after their work
    // (a process, a sandbox, a warm worker's start, the wait for the GPU's lane).
    std::map<std::string, double> stageSeconds;
};

// Scores a space's action. The run asks from one thread.
class TuningScorer {
public:
    virtual ~TuningScorer() = default;
    virtual TuningScore score(const TuningSpace& space, const TuningSpace::Action& action,
                              std::stop_token stop) = 0;
    // A measurement from an earlier part of the same run (a resumed run), for a scorer that
    // measures each action once.
    virtual void remember(const TuningSpace& space, const TuningSpace::Action& action,
                          const TuningScore& score) {}
};

// The real environment: the action's files go into a fast-path workspace of the space's task
// (one per space, under `workspaceRoot`) and the evaluation service judges it with the milestone
// reward, every integrity check included. An action is measured once per run: the same
// rendered kernel asked for again gets the first measurement back (marked `reused`), so a
// converging policy spends no GPU time on what it already knows.
class EvaluationScorer : public TuningScorer {
public:
    EvaluationScorer(EvaluationService& service, EvaluationOptions options,
                     std::string workspaceRoot);
    TuningScore score(const TuningSpace& space, const TuningSpace::Action& action,
                      std::stop_token stop) override;
    void remember(const TuningSpace& space, const TuningSpace::Action& action,
                  const TuningScore& score) override;
    std::size_t measuredActions() const { return memo_.size(); }

private:
    std::string workspaceFor(const TuningSpace& space, std::string* error);

    EvaluationService& service_;
    EvaluationOptions options_;
    std::string workspaceRoot_;
    std::map<std::string, std::string> workspaces_; // space name -> folder
    std::map<std::string, TuningScore> memo_;       // space name + action text -> score
};

} // namespace kwb
