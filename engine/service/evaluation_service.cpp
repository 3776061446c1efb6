#include "engine/service/evaluation_service.h"

#include "engine/cuda/gpu_inventory.h"
#include "engine/evaluation/reward_policy.h"
#include "engine/system/utc_timestamp.h"

#include <algorithm>
#include <chrono>

namespace kwb {

struct EvaluationService::Ticket {
    EvaluationTicket id = 0;
    EvaluationRequest request;
    TicketCallbacks callbacks;
    TicketState state = TicketState::Queued;
    std::stop_source stop;
    std::chrono::steady_clock::time_point submitted;
    EvaluationSnapshot result;
};

namespace {

int detectedGpus(int configured) {
    if (configured >= 0)
        return configured;
    return static_cast<int>(detectGpus().devices.size());
}

// The record of an evaluation that never left the queue.
EvaluationResult cancelledInQueue(const EvaluationRequest& request, double waited) {
    EvaluationResult r;
    r.startedAt = utcTimestamp();
    r.workspace = request.target.workspace;
    r.referencePath = request.target.referencePath;
    r.candidatePath = request.target.candidatePath;
    r.failureKind = "cancelled";
    r.failureMessage = "evaluation cancelled before it started";
    const RewardDecision decision = decideReward(r, request.options.reward);
    r.reward = decision.reward;
    r.rewardReason = decision.reason;
    r.totalSeconds = waited;
    return r;
}

} // namespace

EvaluationService::EvaluationService(EvaluationServiceConfig config)
    // Each running evaluation holds a warm worker of its own workspace (a KernelBench pair's
    // folder, a rollout sample's workspace): fewer workers than evaluations would evict one
    // per request and start another, the torch import the workers exist to save.
    : lanes_(detectedGpus(config.gpuCount)),
      buildSlots_(cpuSharesForThisMachine(config.concurrentEvaluations)),
      warmWorkers_(std::max<std::size_t>(config.warmWorkerCapacity,
                                         std::size_t{config.concurrentEvaluations} + 1)),
      evaluator_(config.python,
                 EvaluationResources{
                     .warmWorkers = &warmWorkers_,
                     .gpuLanes = &lanes_,
                     .cpuTimingLane = &cpuTimingLane_,
                     .buildSlots = &buildSlots_,
                     .runningEvaluations = [this] { return static_cast<unsigned>(running()); },
                     .referenceDescriptions = &referenceDescriptions_}) {
    const unsigned count = std::max(1u, config.concurrentEvaluations);
    for (unsigned i = 0; i < count; ++i)
        workers_.emplace_back([this](std::stop_token stop) { workLoop(stop); });
}

EvaluationService::~EvaluationService() {
    {
        std::lock_guard lock(mutex_);
        for (auto& [id, ticket] : tickets_)
            ticket->stop.request_stop();
    }
    for (auto& worker : workers_)
        worker.request_stop();
    work_.notify_all();
    workers_.clear(); // joins
    // What was still queued is finished as cancelled, so no waiter is left hanging.
    std::deque<std::shared_ptr<Ticket>> left;
    {
        std::lock_guard lock(mutex_);
        left.swap(queue_);
    }
    for (auto& ticket : left)
        finish(ticket, cancelledInQueue(ticket->request, 0.0));
    warmWorkers_.shutdown();
}

EvaluationTicket EvaluationService::submit(EvaluationRequest request, TicketCallbacks callbacks) {
    auto ticket = std::make_shared<Ticket>();
    ticket->request = std::move(request);
    ticket->callbacks = std::move(callbacks);
    ticket->submitted = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mutex_);
        ticket->id = next_++;
        tickets_[ticket->id] = ticket;
        queue_.push_back(ticket);
    }
    work_.notify_one();
    return ticket->id;
}

bool EvaluationService::cancel(EvaluationTicket id) {
    std::shared_ptr<Ticket> queuedTicket;
    {
        std::lock_guard lock(mutex_);
        const auto found = tickets_.find(id);
        if (found == tickets_.end() || found->second->state == TicketState::Finished)
            return false;
        found->second->stop.request_stop();
        if (found->second->state == TicketState::Queued) {
            queuedTicket = found->second;
            queue_.erase(std::remove(queue_.begin(), queue_.end(), queuedTicket), queue_.end());
        }
    }
    if (queuedTicket) {
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                            queuedTicket->submitted)
                                  .count();
        finish(queuedTicket, cancelledInQueue(queuedTicket->request, waited));
    }
    return true;
}

EvaluationSnapshot EvaluationService::wait(EvaluationTicket id) {
    std::unique_lock lock(mutex_);
    const auto found = tickets_.find(id);
    if (found == tickets_.end())
        return nullptr;
    const std::shared_ptr<Ticket> ticket = found->second;
    finished_.wait(lock, [&] { return ticket->state == TicketState::Finished; });
    return ticket->result;
}

EvaluationSnapshot EvaluationService::evaluate(EvaluationRequest request,
                                               const Evaluator::Progress& progress,
                                               std::stop_token stop) {
    const EvaluationTicket ticket = submit(std::move(request), {.progress = progress, .done = {}});
    // The callback runs on the thread that asks for the stop; the ticket is cancelled there.
    const std::stop_callback cancelOnStop(stop, [this, ticket] { cancel(ticket); });
    return wait(ticket);
}

std::optional<TicketState> EvaluationService::state(EvaluationTicket id) const {
    std::lock_guard lock(mutex_);
    const auto found = tickets_.find(id);
    if (found == tickets_.end())
        return std::nullopt;
    return found->second->state;
}

std::size_t EvaluationService::queued() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
}

std::size_t EvaluationService::running() const {
    std::lock_guard lock(mutex_);
    return running_;
}

void EvaluationService::workLoop(std::stop_token stop) {
    while (true) {
        std::shared_ptr<Ticket> ticket;
        {
            std::unique_lock lock(mutex_);
            if (!work_.wait(lock, stop, [&] { return !queue_.empty(); }))
                return;
            ticket = queue_.front();
            queue_.pop_front();
            ticket->state = TicketState::Running;
            ++running_;
        }
        const double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - ticket->submitted)
                .count();
        EvaluationResult result =
            evaluator_.evaluate(ticket->request.target, ticket->request.options,
                                ticket->callbacks.progress, ticket->stop.get_token());
        // The time in the queue is the evaluation's too: its stages and the engine's own time
        // then add up to what the caller waited.
        StageRecord queue;
        queue.name = "queue";
        queue.status = StageStatus::Passed;
        queue.seconds = waited;
        queue.summary = "waited for a free evaluation slot";
        result.stages.insert(result.stages.begin(), queue);
        result.totalSeconds += waited;
        {
            std::lock_guard lock(mutex_);
            --running_;
        }
        finish(ticket, std::move(result));
    }
}

void EvaluationService::finish(const std::shared_ptr<Ticket>& ticket, EvaluationResult result) {
    auto snapshot = std::make_shared<const EvaluationResult>(std::move(result));
    {
        std::lock_guard lock(mutex_);
        ticket->result = snapshot;
        ticket->state = TicketState::Finished;
    }
    finished_.notify_all();
    forgetOldTickets();
    if (ticket->callbacks.done)
        ticket->callbacks.done(ticket->id, snapshot);
}

void EvaluationService::forgetOldTickets() {
    // A long-lived service (kwb serve) keeps the newest finished tickets for late waiters and
    // forgets the oldest, so its memory does not grow with every evaluation.
    constexpr std::size_t kKeptTickets = 4096;
    std::lock_guard lock(mutex_);
    for (auto it = tickets_.begin(); tickets_.size() > kKeptTickets && it != tickets_.end();)
        it = it->second->state == TicketState::Finished ? tickets_.erase(it) : std::next(it);
}

} // namespace kwb
