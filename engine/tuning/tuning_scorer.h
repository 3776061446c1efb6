#pragma once

#include "engine/evaluation/evaluator.h"
#include "engine/service/evaluation_service.h"
#include "engine/tuning/tuning_space.h"

#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace kwb {

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
    // Several actions of one space (a group), their scores in the order asked. This one scores
    // them one after another; a scorer that can measure side by side does so. Actions left when
    // `stop` is requested are not scored (their error says "cancelled").
    virtual std::vector<TuningScore> scoreAll(const TuningSpace& space,
                                              const std::vector<TuningSpace::Action>& actions,
                                              std::stop_token stop);
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
//
// A group's distinct actions are measured up to `parallel` at a time, each in its own copy of
// the space's workspace (a slot). The service's GPU lanes keep that honest: a timed stage has
// its GPU alone, and what runs side by side is the untimed work (sandboxes, compiles,
// verification), which is most of an evaluation's wall time.
class EvaluationScorer : public TuningScorer {
public:
    EvaluationScorer(EvaluationService& service, EvaluationOptions options,
                     std::string workspaceRoot, int parallel = 1);
    TuningScore score(const TuningSpace& space, const TuningSpace::Action& action,
                      std::stop_token stop) override;
    std::vector<TuningScore> scoreAll(const TuningSpace& space,
                                      const std::vector<TuningSpace::Action>& actions,
                                      std::stop_token stop) override;
    void remember(const TuningSpace& space, const TuningSpace::Action& action,
                  const TuningScore& score) override;
    std::size_t measuredActions() const { return memo_.size(); }
    // The workspace folder of a space's slot (0 .. parallel-1), made on first use.
    std::string workspaceFor(const TuningSpace& space, int slot, std::string* error);

private:
    // Writes the action's files into the slot's workspace; nullopt with score->error set when
    // that fails.
    std::optional<EvaluationRequest> requestFor(const TuningSpace& space,
                                                const TuningSpace::Action& action, int slot,
                                                TuningScore* score);
    TuningScore scoreOf(const EvaluationSnapshot& result) const;

    EvaluationService& service_;
    EvaluationOptions options_;
    std::string workspaceRoot_;
    int parallel_;
    std::map<std::string, std::string> workspaces_; // space name and slot -> folder
    std::map<std::string, TuningScore> memo_;       // space name + action text -> score
};

} // namespace kwb
