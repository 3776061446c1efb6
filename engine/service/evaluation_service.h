#pragma once

#include "engine/evaluation/cpu_shares.h"
#include "engine/evaluation/evaluator.h"
#include "engine/evaluation/gpu_lanes.h"
#include "engine/evaluation/reference_descriptions.h"
#include "engine/evaluation/warm_worker.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace kwb {

using EvaluationTicket = std::uint64_t;
// A finished evaluation as every reader sees it: shared, never changed after it is published.
using EvaluationSnapshot = std::shared_ptr<const EvaluationResult>;

struct EvaluationRequest {
    EvaluationTarget target;
    EvaluationOptions options;
    // Who asked ("gui", "agent:<episode>", "cli", "rollout:<n>"): for the queue's listing and
    // the logs, not for scheduling.
    std::string tag;
};

enum class TicketState { Queued, Running, Finished };

struct TicketCallbacks {
    // On the service's worker thread, as stages start (Evaluator::Progress).
    std::function<void(const std::string& stage)> progress;
    // Once, on the thread that finished or cancelled the ticket.
    std::function<void(EvaluationTicket, const EvaluationSnapshot&)> done;
};

struct EvaluationServiceConfig {
    std::string python; // empty: auto-detect (Evaluator)
    // Evaluations that run at once. Their timed stages still take turns on each GPU (its lane);
    // the rest (inspect, compiles, verification) runs side by side.
    unsigned concurrentEvaluations = 2;
    // GPUs with a lane each; negative: the GPUs this machine has.
    int gpuCount = -1;
    std::size_t warmWorkerCapacity = 3; // at least one more than concurrentEvaluations
};

// The one owner of evaluation work in a process: requests are queued as tickets, run by a few
// worker threads through one Evaluator that shares this service's warm workers and GPU lanes,
// and published as immutable snapshots. The GUI's bridge, the agent's tools, the final
// evaluation, `kwb serve` and the rollout scheduler submit here; cancelling a ticket stops it
// whether it waits in the queue or runs (the stop token reaches the stage's processes).
class EvaluationService {
public:
    explicit EvaluationService(EvaluationServiceConfig config = {});
    ~EvaluationService(); // cancels what is queued and running, and waits for the workers
    EvaluationService(const EvaluationService&) = delete;
    EvaluationService& operator=(const EvaluationService&) = delete;

    EvaluationTicket submit(EvaluationRequest request, TicketCallbacks callbacks = {});
    // False when the ticket is unknown or already finished.
    bool cancel(EvaluationTicket ticket);
    // Blocks until the ticket is finished; null for an unknown ticket.
    EvaluationSnapshot wait(EvaluationTicket ticket);
    // submit + wait for callers that block anyway (the agent's tools, the final evaluation): a
    // stop on `stop` cancels the ticket wherever it is.
    EvaluationSnapshot evaluate(EvaluationRequest request, const Evaluator::Progress& progress,
                                std::stop_token stop);
    std::optional<TicketState> state(EvaluationTicket ticket) const;
    std::size_t queued() const;
    std::size_t running() const;

    const Evaluator& evaluator() const { return evaluator_; }
    int gpuLanes() const { return lanes_.count(); }

private:
    struct Ticket;
    void workLoop(std::stop_token stop);
    void finish(const std::shared_ptr<Ticket>& ticket, EvaluationResult result);
    void forgetOldTickets();

    GpuLanes lanes_;
    GpuLanes cpuTimingLane_{1};
    BuildSlots buildSlots_;
    ReferenceDescriptions referenceDescriptions_;
    WarmWorkerPool warmWorkers_;
    Evaluator evaluator_;
    mutable std::mutex mutex_;
    std::condition_variable_any work_;
    std::condition_variable finished_;
    std::deque<std::shared_ptr<Ticket>> queue_;
    std::map<EvaluationTicket, std::shared_ptr<Ticket>> tickets_;
    EvaluationTicket next_ = 1;
    std::size_t running_ = 0;
    std::vector<std::jthread> workers_; // last: they stop and join before the rest goes
};

} // namespace kwb
