#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <vector>

namespace kwb {

// Lanes for GPU work, one per GPU (and one for the CPU's cores). A timed stage holds its lane
// alone for as long as it runs: no other evaluation's kernels may share the GPU while it times
// (each would time the other's kernels, and a context switch to another process's kernels lands
// inside a timed call). Stages that use the GPU without timing it (inspect, verify) share a lane
// with each other but never with a timed stage. A timed stage that waits goes first: new shared
// holds wait behind it, so verifications cannot keep a profile off the GPU for good. Compiles do
// not take a lane. A timed stage of a warm worker starts with its lane shared and trades it for
// the lane alone when it reaches its timed calls (HarnessStageSpec::takeLaneAlone): its start,
// inputs and compilation need no GPU of their own. A warm worker's standby preparation for the
// next evaluation (WarmWorkerPool::standBy) is untimed work on the device too: it holds the lane
// shared until its children are prepared, on the CPU as well (the timing lane there), where
// untimed stages otherwise take no lane.
class GpuLanes {
public:
    // A lane held, alone or shared; released when destroyed.
    class Hold {
    public:
        Hold(GpuLanes* lanes, int index, bool shared)
            : lanes_(lanes), index_(index), shared_(shared) {}
        Hold(Hold&& other) noexcept
            : lanes_(other.lanes_), index_(other.index_), shared_(other.shared_) {
            other.lanes_ = nullptr;
        }
        Hold& operator=(Hold&&) = delete;
        Hold(const Hold&) = delete;
        ~Hold();
        int index() const { return index_; }
        bool shared() const { return shared_; }

    private:
        GpuLanes* lanes_;
        int index_;
        bool shared_;
    };

    explicit GpuLanes(int gpuCount);

    int count() const { return static_cast<int>(lanes_.size()); }
    // Waits for a lane that nobody holds and takes it alone (lanes are used in turn, or lane
    // `wanted` when given: the one whose GPU a stage already uses); nullopt when `stop` was
    // requested first, or when there is no GPU. With `stop` already requested it takes a lane
    // that is free at once, and waits for none.
    std::optional<Hold> acquire(std::stop_token stop, int wanted = -1);
    // Waits until no timed stage holds or waits for a lane, then shares the least shared one
    // (or lane `wanted` when given).
    std::optional<Hold> acquireShared(std::stop_token stop, int wanted = -1);
    // The lane with the fewest holds now, for a stage that must name its GPU before it holds
    // one (a warm worker's server is started for one GPU).
    int quietestLane() const;
    int busyLanes() const;    // lanes held alone
    int sharedHolds() const;  // shared holds on all lanes
    int waitingAlone() const; // timed stages waiting for a lane alone

private:
    struct Lane {
        bool alone = false;
        int shared = 0;
    };
    void release(int index, bool shared);

    mutable std::mutex mutex_;
    std::condition_variable_any freed_;
    std::vector<Lane> lanes_;
    int next_ = 0;         // where the search for a free lane starts: lanes are used in turn
    int waitingAlone_ = 0; // timed stages waiting for a lane
};

} // namespace kwb
