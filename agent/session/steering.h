#pragma once

#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::agent {

// What the agent is doing, as a GUI or CLI shows it.
// Evaluating: the episode's final evaluation (minutes on a CPU), after the model's last turn.
enum class AgentState { Running, Thinking, Tool, Evaluating, Paused, Stopped };

std::string_view agentStateName(AgentState state); // "running", "thinking", ...

// The handle a GUI or CLI holds to steer a running episode. Every method is thread-safe; the
// EpisodeRunner polls it between steps and hands it a stop source for each provider call or
// tool run, so interrupt(), stop() and a steering message can cancel the call in flight.
// One controller per episode: once stopped, it stays stopped.
class SteeringController {
public:
    enum class Mode {
        Queue, // delivered after the current tool results, before the next model call
        Steer, // the same, but a model call that is streaming now is cancelled and redone
    };

    struct Injected {
        std::string text;
        Mode mode = Mode::Queue;
    };

    void pause();     // takes effect after the current step
    void interrupt(); // cancels the provider call or tool in flight, then pauses
    void resume();
    void stop(); // cancels what is in flight; the episode ends as stopped (it can be resumed)
    // stop(), for an episode whose work is given up: it ends as cancelled. A rollout cancels its
    // running episodes when the run is stopped, and runs their samples afresh when it resumes.
    void cancel();
    void injectMessage(std::string text, Mode mode = Mode::Queue);
    // Only while paused (returns false otherwise): on resume the agent is told, with a diff.
    bool notifyFileEdited(std::string path);

    AgentState state() const;
    bool stopRequested() const;
    bool cancelRequested() const; // cancel() was called (stopRequested() is then true too)

    // --- the runner's side -------------------------------------------------------------------
    // A fresh stop token for one provider call or tool run; `state` is Thinking or Tool.
    std::stop_token beginStep(AgentState state);
    void endStep(); // back to Running (or Paused / Stopped)
    bool pauseRequested() const;
    // Blocks while paused; returns false when stopped. Sets the state to Paused meanwhile.
    bool waitWhilePaused();
    std::vector<Injected> takeMessages();
    std::vector<std::string> takeEditedFiles();
    bool hasPendingSteer() const;
    void finished(); // the episode ended: the state becomes Stopped

private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    AgentState state_ = AgentState::Running;
    bool pauseRequested_ = false;
    bool stopRequested_ = false;
    bool cancelRequested_ = false;
    bool interruptPending_ = false;
    std::stop_source inFlight_;
    std::vector<Injected> messages_;
    std::vector<std::string> editedFiles_;
};

} // namespace kwb::agent
