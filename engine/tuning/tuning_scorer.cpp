#include "engine/tuning/tuning_scorer.h"

#include "engine/evaluation/failure_kinds.h"
#include "engine/service/evaluation_service.h"
#include "engine/workspace/contained_files.h"
#include "engine/workspace/workspace.h"

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>

namespace kwb {
namespace {

namespace fs = std::filesystem;

// Failures of the machinery rather than of the action (a fast-path kernel on a machine with
// no GPU among them): reported, never turned into a reward of -1 that the policy would learn
// from.
bool isMachineryFailure(const std::string& kind) {
    return kind == "cancelled" || kind == "no_gpu" || isInfrastructureFailure(kind);
}

} // namespace

std::vector<TuningScore> TuningScorer::scoreAll(const TuningSpace& space,
                                                const std::vector<TuningSpace::Action>& actions,
                                                std::stop_token stop) {
    std::vector<TuningScore> scores(actions.size());
    for (std::size_t i = 0; i < actions.size(); ++i) {
        if (stop.stop_requested())
            scores[i].error = "cancelled: the run was stopped";
        else
            scores[i] = score(space, actions[i], stop);
    }
    return scores;
}

EvaluationScorer::EvaluationScorer(EvaluationService& service, EvaluationOptions options,
                                   std::string workspaceRoot, int parallel)
    : service_(service), options_(std::move(options)), workspaceRoot_(std::move(workspaceRoot)),
      parallel_(std::max(1, parallel)) {}

std::string EvaluationScorer::workspaceFor(const TuningSpace& space, int slot, std::string* error) {
    const std::string key = space.name + "\n" + std::to_string(slot);
    if (const auto found = workspaces_.find(key); found != workspaces_.end())
        return found->second;
    // Slot 0 keeps the space's name: a run with one slot has the folders it always had.
    const std::string name = slot == 0 ? space.name : space.name + "-" + std::to_string(slot + 1);
    const std::string folder = (fs::path(workspaceRoot_) / name).string();
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
    workspaces_[key] = made.directory;
    return made.directory;
}

void EvaluationScorer::remember(const TuningSpace& space, const TuningSpace::Action& action,
                                const TuningScore& score) {
    if (score.measured)
        memo_.emplace(space.name + "\n" + space.actionText(action), score);
}

std::optional<EvaluationRequest> EvaluationScorer::requestFor(const TuningSpace& space,
                                                              const TuningSpace::Action& action,
                                                              int slot, TuningScore* score) {
    std::string error;
    const std::string workspace = workspaceFor(space, slot, &error);
    if (workspace.empty()) {
        score->error = error;
        return std::nullopt;
    }
    const auto files = space.render(action, &error);
    if (!files) {
        score->error = error;
        return std::nullopt;
    }
    for (const auto& [path, content] : *files)
        if (!writeFileInside(workspace, path, content, &error)) {
            score->error = "cannot write " + path + ": " + error;
            return std::nullopt;
        }
    return EvaluationRequest{EvaluationTarget::forWorkspace(workspace), options_,
                             "tuning:" + space.name};
}

TuningScore EvaluationScorer::scoreOf(const EvaluationSnapshot& result) const {
    TuningScore score;
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
    if (isMachineryFailure(result->failureKind)) {
        score.error = result->failureKind + ": " + result->failureMessage;
        return score;
    }
    score.measured = true;
    score.reward = result->reward;
    score.correct = result->correct;
    score.speedupVsEager = result->speedupVsEager;
    score.speedupVsCompile = result->speedupVsCompile;
    return score;
}

TuningScore EvaluationScorer::score(const TuningSpace& space, const TuningSpace::Action& action,
                                    std::stop_token stop) {
    return scoreAll(space, {action}, stop).front();
}

std::vector<TuningScore> EvaluationScorer::scoreAll(const TuningSpace& space,
                                                    const std::vector<TuningSpace::Action>& actions,
                                                    std::stop_token stop) {
    std::vector<TuningScore> scores(actions.size());
    // Which actions to measure: the first of each rendered kernel this run has not measured;
    // a repeat waits for that one's score.
    std::vector<std::size_t> toMeasure;
    std::map<std::string, std::size_t> firstAsked; // key -> index
    std::vector<std::optional<std::size_t>> repeatOf(actions.size());
    std::vector<std::string> keys(actions.size());
    for (std::size_t i = 0; i < actions.size(); ++i) {
        keys[i] = space.name + "\n" + space.actionText(actions[i]);
        if (const auto known = memo_.find(keys[i]); known != memo_.end()) {
            scores[i] = known->second;
            scores[i].reused = true;
            scores[i].seconds = 0;
            scores[i].stageSeconds.clear();
        } else if (const auto first = firstAsked.find(keys[i]); first != firstAsked.end()) {
            repeatOf[i] = first->second;
        } else {
            firstAsked.emplace(keys[i], i);
            toMeasure.push_back(i);
        }
    }

    // Finished tickets arrive on the service's threads. The state is shared so that a callback
    // still unlocking it cannot outlive it.
    struct Finished {
        std::size_t index;
        int slot;
        EvaluationSnapshot result;
    };
    struct Shared {
        std::mutex mutex;
        std::condition_variable done;
        std::vector<Finished> finished;
        std::set<EvaluationTicket> running;
    };
    const auto shared = std::make_shared<Shared>();
    const std::stop_callback cancelOnStop(stop, [this, shared] {
        std::vector<EvaluationTicket> tickets;
        {
            std::lock_guard lock(shared->mutex);
            tickets.assign(shared->running.begin(), shared->running.end());
        }
        for (const EvaluationTicket ticket : tickets)
            service_.cancel(ticket); // outside the lock: a queued ticket finishes right here
    });

    std::vector<int> freeSlots;
    for (int slot = parallel_ - 1; slot >= 0; --slot)
        freeSlots.push_back(slot);
    std::size_t next = 0;
    int inFlight = 0;
    while (true) {
        while (inFlight < parallel_ && next < toMeasure.size() && !stop.stop_requested()) {
            const std::size_t index = toMeasure[next++];
            const int slot = freeSlots.back();
            auto request = requestFor(space, actions[index], slot, &scores[index]);
            if (!request)
                continue;
            freeSlots.pop_back();
            ++inFlight;
            EvaluationTicket ticket = 0;
            {
                std::lock_guard lock(shared->mutex); // a quick ticket cannot finish unknown
                ticket =
                    service_.submit(std::move(*request),
                                    {.progress = {},
                                     .done = [shared, index, slot](EvaluationTicket id,
                                                                   const EvaluationSnapshot& r) {
                                         std::lock_guard lock(shared->mutex);
                                         shared->running.erase(id);
                                         shared->finished.push_back({index, slot, r});
                                         shared->done.notify_all();
                                     }});
                shared->running.insert(ticket);
            }
            // A stop that came while this ticket was being made missed it in `running`.
            if (stop.stop_requested())
                service_.cancel(ticket);
        }
        if (inFlight == 0)
            break;
        std::vector<Finished> finished;
        {
            std::unique_lock lock(shared->mutex);
            shared->done.wait(lock, [&] { return !shared->finished.empty(); });
            finished.swap(shared->finished);
        }
        for (Finished& f : finished) {
            scores[f.index] = scoreOf(f.result);
            if (scores[f.index].measured)
                memo_[keys[f.index]] = scores[f.index];
            freeSlots.push_back(f.slot);
            --inFlight;
        }
    }
    for (std::size_t i = 0; i < actions.size(); ++i) {
        if (repeatOf[i]) {
            scores[i] = scores[*repeatOf[i]];
            scores[i].reused = true;
            scores[i].seconds = 0;
            scores[i].stageSeconds.clear();
        } else if (scores[i].error.empty() && !scores[i].measured && stop.stop_requested()) {
            scores[i].error = "cancelled: the run was stopped";
        }
    }
    return scores;
}

} // namespace kwb
