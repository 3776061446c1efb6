#pragma once

#include "agent/session/steering.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <vector>

namespace kwb::agent {

// Pauses and resumes a running rollout from another thread (the GUI's Pause button). Paused, no
// new episode starts, and every running episode pauses after its current step through its own
// SteeringController, so a pause holds the model calls and the evaluations alike; nothing is
// cancelled, and resume() carries on where each episode stood. Stopping stays with the run's
// stop token (its episodes end as stopped and run again on resume).
class RolloutControl {
public:
    void pause();
    void resume();
    bool paused() const;

    // --- the runner's side -------------------------------------------------------------------
    // Blocks while paused; false when `stop` was requested meanwhile.
    bool waitWhilePaused(std::stop_token stop);
    // A running episode's steering, followed by pause() and resume() while attached (paused at
    // once when attached during a pause). Detached when the returned handle is destroyed.
    class Attachment {
    public:
        Attachment(RolloutControl* control, std::shared_ptr<SteeringController> steering);
        ~Attachment();
        Attachment(const Attachment&) = delete;
        Attachment& operator=(const Attachment&) = delete;

    private:
        RolloutControl* control_;
        std::shared_ptr<SteeringController> steering_;
    };

private:
    mutable std::mutex mutex_;
    std::condition_variable_any changed_;
    bool paused_ = false;
    std::vector<std::shared_ptr<SteeringController>> running_;
};

} // namespace kwb::agent
