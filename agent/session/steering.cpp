#include "agent/session/steering.h"

#include <algorithm>
#include <utility>

namespace kwb::agent {

std::string_view agentStateName(AgentState state) {
    switch (state) {
    case AgentState::Running:
        return "running";
    case AgentState::Thinking:
        return "thinking";
    case AgentState::Tool:
        return "tool";
    case AgentState::Evaluating:
        return "evaluating";
    case AgentState::Paused:
        return "paused";
    case AgentState::Stopped:
        return "stopped";
    }
    return "running";
}

void SteeringController::pause() {
    std::lock_guard lock(mutex_);
    if (!stopRequested_)
        pauseRequested_ = true;
    changed_.notify_all();
}

void SteeringController::interrupt() {
    std::lock_guard lock(mutex_);
    if (stopRequested_)
        return;
    pauseRequested_ = true;
    interruptPending_ = true; // also cancels a call that starts before the pause takes effect
    inFlight_.request_stop();
    changed_.notify_all();
}

void SteeringController::resume() {
    std::lock_guard lock(mutex_);
    pauseRequested_ = false;
    interruptPending_ = false;
    changed_.notify_all();
}

void SteeringController::stop() {
    std::lock_guard lock(mutex_);
    stopRequested_ = true;
    pauseRequested_ = false;
    inFlight_.request_stop();
    changed_.notify_all();
}

void SteeringController::cancel() {
    {
        std::lock_guard lock(mutex_);
        cancelRequested_ = true;
    }
    stop();
}

bool SteeringController::cancelRequested() const {
    std::lock_guard lock(mutex_);
    return cancelRequested_;
}

void SteeringController::injectMessage(std::string text, Mode mode) {
    std::lock_guard lock(mutex_);
    messages_.push_back({std::move(text), mode});
    if (mode == Mode::Steer && state_ == AgentState::Thinking)
        inFlight_.request_stop();
    changed_.notify_all();
}

bool SteeringController::notifyFileEdited(std::string path) {
    std::lock_guard lock(mutex_);
    if (state_ != AgentState::Paused)
        return false;
    if (std::find(editedFiles_.begin(), editedFiles_.end(), path) == editedFiles_.end())
        editedFiles_.push_back(std::move(path));
    return true;
}

AgentState SteeringController::state() const {
    std::lock_guard lock(mutex_);
    return state_;
}

bool SteeringController::stopRequested() const {
    std::lock_guard lock(mutex_);
    return stopRequested_;
}

std::stop_token SteeringController::beginStep(AgentState state) {
    std::lock_guard lock(mutex_);
    inFlight_ = std::stop_source();
    const bool steerPending = state == AgentState::Thinking &&
                              std::any_of(messages_.begin(), messages_.end(),
                                          [](const Injected& m) { return m.mode == Mode::Steer; });
    if (stopRequested_ || interruptPending_ || steerPending)
        inFlight_.request_stop();
    state_ = stopRequested_ ? AgentState::Stopped : state;
    return inFlight_.get_token();
}

void SteeringController::endStep() {
    std::lock_guard lock(mutex_);
    state_ = stopRequested_ ? AgentState::Stopped : AgentState::Running;
}

bool SteeringController::pauseRequested() const {
    std::lock_guard lock(mutex_);
    return pauseRequested_;
}

bool SteeringController::waitWhilePaused() {
    std::unique_lock lock(mutex_);
    if (pauseRequested_ && !stopRequested_) {
        interruptPending_ = false;
        state_ = AgentState::Paused;
        changed_.notify_all();
        changed_.wait(lock, [this] { return !pauseRequested_ || stopRequested_; });
    }
    state_ = stopRequested_ ? AgentState::Stopped : AgentState::Running;
    return !stopRequested_;
}

std::vector<SteeringController::Injected> SteeringController::takeMessages() {
    std::lock_guard lock(mutex_);
    return std::exchange(messages_, {});
}

std::vector<std::string> SteeringController::takeEditedFiles() {
    std::lock_guard lock(mutex_);
    return std::exchange(editedFiles_, {});
}

bool SteeringController::hasPendingSteer() const {
    std::lock_guard lock(mutex_);
    return std::any_of(messages_.begin(), messages_.end(),
                       [](const Injected& m) { return m.mode == Mode::Steer; });
}

void SteeringController::finished() {
    std::lock_guard lock(mutex_);
    state_ = AgentState::Stopped;
    changed_.notify_all();
}

} // namespace kwb::agent
