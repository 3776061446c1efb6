#include "engine/evaluation/gpu_lanes.h"

#include <algorithm>

namespace kwb {

GpuLanes::Hold::~Hold() {
    if (lanes_)
        lanes_->release(index_, shared_);
}

GpuLanes::GpuLanes(int gpuCount) : lanes_(static_cast<std::size_t>(std::max(0, gpuCount))) {}

std::optional<GpuLanes::Hold> GpuLanes::acquire(std::stop_token stop, int wanted) {
    std::unique_lock lock(mutex_);
    if (lanes_.empty() || wanted >= static_cast<int>(lanes_.size()))
        return std::nullopt;
    int chosen = -1;
    ++waitingAlone_;
    const bool gotOne = freed_.wait(lock, stop, [&] {
        for (std::size_t step = 0; step < lanes_.size(); ++step) {
            const auto index = wanted >= 0
                                   ? static_cast<std::size_t>(wanted)
                                   : (static_cast<std::size_t>(next_) + step) % lanes_.size();
            if (!lanes_[index].alone && lanes_[index].shared == 0) {
                chosen = static_cast<int>(index);
                return true;
            }
        }
        return false;
    });
    --waitingAlone_;
    if (!gotOne) {
        // Shared holds that waited behind this one may go now.
        lock.unlock();
        freed_.notify_all();
        return std::nullopt;
    }
    lanes_[static_cast<std::size_t>(chosen)].alone = true;
    next_ = (chosen + 1) % static_cast<int>(lanes_.size());
    return Hold(this, chosen, false);
}

std::optional<GpuLanes::Hold> GpuLanes::acquireShared(std::stop_token stop, int wanted) {
    std::unique_lock lock(mutex_);
    if (lanes_.empty() || wanted >= static_cast<int>(lanes_.size()))
        return std::nullopt;
    int chosen = -1;
    const bool gotOne = freed_.wait(lock, stop, [&] {
        if (waitingAlone_ > 0)
            return false;
        chosen = -1;
        for (std::size_t index = 0; index < lanes_.size(); ++index)
            if (!lanes_[index].alone && (wanted < 0 || static_cast<int>(index) == wanted) &&
                (chosen < 0 ||
                 lanes_[index].shared < lanes_[static_cast<std::size_t>(chosen)].shared))
                chosen = static_cast<int>(index);
        return chosen >= 0;
    });
    if (!gotOne)
        return std::nullopt;
    ++lanes_[static_cast<std::size_t>(chosen)].shared;
    return Hold(this, chosen, true);
}

int GpuLanes::busyLanes() const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(
        std::count_if(lanes_.begin(), lanes_.end(), [](const Lane& l) { return l.alone; }));
}

int GpuLanes::sharedHolds() const {
    std::lock_guard lock(mutex_);
    int holds = 0;
    for (const Lane& lane : lanes_)
        holds += lane.shared;
    return holds;
}

int GpuLanes::quietestLane() const {
    std::lock_guard lock(mutex_);
    int chosen = 0;
    auto load = [&](std::size_t index) {
        return (lanes_[index].alone ? 1 : 0) + lanes_[index].shared;
    };
    for (std::size_t index = 1; index < lanes_.size(); ++index)
        if (load(index) < load(static_cast<std::size_t>(chosen)))
            chosen = static_cast<int>(index);
    return chosen;
}

int GpuLanes::waitingAlone() const {
    std::lock_guard lock(mutex_);
    return waitingAlone_;
}

void GpuLanes::release(int index, bool shared) {
    {
        std::lock_guard lock(mutex_);
        Lane& lane = lanes_[static_cast<std::size_t>(index)];
        if (shared)
            --lane.shared;
        else
            lane.alone = false;
    }
    freed_.notify_all();
}

} // namespace kwb
