#include "agent/rollout/rollout_control.h"

#include <algorithm>

namespace kwb::agent {

void RolloutControl::pause() {
    std::lock_guard lock(mutex_);
    paused_ = true;
    for (const auto& steering : running_)
        steering->pause();
}

void RolloutControl::resume() {
    {
        std::lock_guard lock(mutex_);
        paused_ = false;
        for (const auto& steering : running_)
            steering->resume();
    }
    changed_.notify_all();
}

bool RolloutControl::paused() const {
    std::lock_guard lock(mutex_);
    return paused_;
}

bool RolloutControl::waitWhilePaused(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    // The stop token wakes the wait itself (condition_variable_any), so Stop works while paused.
    return changed_.wait(lock, stop, [this] { return !paused_; });
}

RolloutControl::Attachment::Attachment(RolloutControl* control,
                                       std::shared_ptr<SteeringController> steering)
    : control_(control), steering_(std::move(steering)) {
    if (!control_)
        return;
    std::lock_guard lock(control_->mutex_);
    control_->running_.push_back(steering_);
    if (control_->paused_)
        steering_->pause();
}

RolloutControl::Attachment::~Attachment() {
    if (!control_)
        return;
    std::lock_guard lock(control_->mutex_);
    auto& running = control_->running_;
    running.erase(std::remove(running.begin(), running.end(), steering_), running.end());
}

} // namespace kwb::agent
