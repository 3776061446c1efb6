#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <vector>

namespace kwb {

// Lanes for timed work, one per GPU (and one for the CPU's cores): a timed stage holds its lane
// for as long as it runs, so that two timed stages never share a GPU (each would time the other's
// kernels). Untimed stages (compiles, verification) do not take a lane.
class GpuLanes {
public:
    // The lane held; released when destroyed.
    class Hold {
    public:
        Hold(GpuLanes* lanes, int index) : lanes_(lanes), index_(index) {}
        Hold(Hold&& other) noexcept : lanes_(other.lanes_), index_(other.index_) {
            other.lanes_ = nullptr;
        }
        Hold& operator=(Hold&&) = delete;
        Hold(const Hold&) = delete;
        ~Hold();
        int index() const { return index_; }

    private:
        GpuLanes* lanes_;
        int index_;
    };

    explicit GpuLanes(int gpuCount);

    int count() const { return static_cast<int>(busy_.size()); }
    // Waits for any free lane and takes it (the one free longest ago first); nullopt when `stop`
    // was requested first, or when there is no GPU.
    std::optional<Hold> acquire(std::stop_token stop);
    int busyLanes() const;

private:
    void release(int index);

    mutable std::mutex mutex_;
    std::condition_variable_any freed_;
    std::vector<bool> busy_;
    int next_ = 0; // where the search for a free lane starts: lanes are used in turn
};

} // namespace kwb
