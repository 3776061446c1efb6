#include "engine/evaluation/gpu_lanes.h"

#include <algorithm>

namespace kwb {

GpuLanes::Hold::~Hold() {
    if (lanes_)
        lanes_->release(index_);
}

GpuLanes::GpuLanes(int gpuCount) : busy_(static_cast<std::size_t>(std::max(0, gpuCount)), false) {}

std::optional<GpuLanes::Hold> GpuLanes::acquire(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    if (busy_.empty())
        return std::nullopt;
    int chosen = -1;
    const bool gotOne = freed_.wait(lock, stop, [&] {
        for (std::size_t step = 0; step < busy_.size(); ++step) {
            const int index = static_cast<int>((next_ + step) % busy_.size());
            if (!busy_[static_cast<std::size_t>(index)]) {
                chosen = index;
                return true;
            }
        }
        return false;
    });
    if (!gotOne)
        return std::nullopt;
    busy_[static_cast<std::size_t>(chosen)] = true;
    next_ = (chosen + 1) % static_cast<int>(busy_.size());
    return Hold(this, chosen);
}

int GpuLanes::busyLanes() const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(std::count(busy_.begin(), busy_.end(), true));
}

void GpuLanes::release(int index) {
    {
        std::lock_guard lock(mutex_);
        busy_[static_cast<std::size_t>(index)] = false;
    }
    freed_.notify_all();
}

} // namespace kwb
