#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>

namespace kwb {

// How an evaluation's stages share the machine's cores with the other evaluations running at
// the same time. Measured on a 16-core GPU host, 12 evaluations at once that each built with
// MAX_JOBS = 16 and ran stages with 8 torch threads left the GPU 4 % busy: verify took 6-15 s
// where it takes 1 s alone, because every stage's CPU work waited behind everyone's builds.
struct CpuShares {
    // A timed stage holds its lane alone (on the CPU: all the cores): the threads it would have
    // alone, so its timings match the baselines', which were timed the same way.
    unsigned timedStageThreads = 1;
    // An untimed stage's torch threads: its part of the cores.
    unsigned stageThreads = 1;
    // Extension builds that may run at once (half the cores' worth), and MAX_JOBS for each.
    unsigned buildSlots = 1;
    unsigned buildJobs = 1;
};

// How torch's OpenMP threads wait between parallel regions in a CPU-mode stage: asleep, not
// spinning, since evaluations running side by side each size their threads as if alone.
inline constexpr const char* kCpuOpenMpWaitPolicy = "PASSIVE";

// `cores`: the machine's (0 reads as 1); `concurrentEvaluations`: how many run at once (0 reads
// as 1: a one-shot evaluation gets the whole machine).
CpuShares cpuSharesFor(unsigned cores, unsigned concurrentEvaluations);
// The same for this machine's cores.
CpuShares cpuSharesForThisMachine(unsigned concurrentEvaluations);

// The slots extension builds take in turn: a build waits here until fewer than `count` others
// run, and builds with `jobsEach` jobs (MAX_JOBS). One owner (the evaluation service) sizes it
// from its concurrency (CpuShares) and shares it between its evaluations.
class BuildSlots {
public:
    // A slot taken; given back when destroyed.
    class Hold {
    public:
        explicit Hold(BuildSlots* slots) : slots_(slots) {}
        Hold(Hold&& other) noexcept : slots_(other.slots_) { other.slots_ = nullptr; }
        Hold& operator=(Hold&&) = delete;
        Hold(const Hold&) = delete;
        ~Hold();

    private:
        BuildSlots* slots_;
    };

    explicit BuildSlots(unsigned count, unsigned jobsEach = 1); // zeros read as 1
    explicit BuildSlots(const CpuShares& shares)
        : BuildSlots(shares.buildSlots, shares.buildJobs) {}

    // Waits for a free slot; nullopt when `stop` was requested first.
    std::optional<Hold> acquire(std::stop_token stop);
    unsigned count() const { return count_; }
    unsigned jobsEach() const { return jobsEach_; }
    unsigned taken() const;

private:
    void release();

    const unsigned count_;
    const unsigned jobsEach_;
    mutable std::mutex mutex_;
    std::condition_variable_any freed_;
    unsigned taken_ = 0;
};

} // namespace kwb
