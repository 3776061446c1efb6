#include "engine/evaluation/cpu_shares.h"

#include <algorithm>
#include <thread>

namespace kwb {

namespace {

// More torch threads than this bought nothing for the tasks' sizes and made every stage's
// start (the thread pool) slower.
constexpr unsigned kMostStageThreads = 8;

} // namespace

CpuShares cpuSharesFor(unsigned cores, unsigned concurrentEvaluations) {
    cores = std::max(1u, cores);
    const unsigned running = std::max(1u, concurrentEvaluations);
    CpuShares shares;
    shares.timedStageThreads = std::min(cores, kMostStageThreads);
    shares.stageThreads = std::clamp(cores / running, 1u, kMostStageThreads);
    // A build is mostly one or two compiler processes (a kernel file and the binding), each on
    // one core: builds for half the cores at once leave the rest to the stages that hold a GPU
    // lane meanwhile, whose time on the CPU is time the GPU waits. MAX_JOBS lets one build with
    // many files use a whole slot's share; all slots compiling that many files at once could
    // take every core, which builds of one or two files never do.
    shares.buildSlots = std::clamp(cores / 2, 1u, running);
    shares.buildJobs = std::max(1u, cores / shares.buildSlots);
    return shares;
}

CpuShares cpuSharesForThisMachine(unsigned concurrentEvaluations) {
    return cpuSharesFor(std::thread::hardware_concurrency(), concurrentEvaluations);
}

BuildSlots::Hold::~Hold() {
    if (slots_)
        slots_->release();
}

BuildSlots::BuildSlots(unsigned count, unsigned jobsEach)
    : count_(std::max(1u, count)), jobsEach_(std::max(1u, jobsEach)) {}

std::optional<BuildSlots::Hold> BuildSlots::acquire(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    if (!freed_.wait(lock, stop, [&] { return taken_ < count_; }))
        return std::nullopt;
    ++taken_;
    return Hold(this);
}

unsigned BuildSlots::taken() const {
    std::lock_guard lock(mutex_);
    return taken_;
}

void BuildSlots::release() {
    {
        std::lock_guard lock(mutex_);
        --taken_;
    }
    freed_.notify_one();
}

} // namespace kwb
