#pragma once

namespace kwb {

// A descriptor another thread makes readable: a connection's thread polls it together with its
// socket, so that it wakes the moment an evaluation ends instead of at its next poll interval.
// Shared (std::shared_ptr) by the waiter and whoever signals, since the signal may come after
// the waiter has stopped waiting.
class WakeupSignal {
public:
    WakeupSignal();
    ~WakeupSignal();
    WakeupSignal(const WakeupSignal&) = delete;
    WakeupSignal& operator=(const WakeupSignal&) = delete;

    // Readable from the first signal on; -1 where the system gave no descriptor (waiters then
    // fall back to their poll interval).
    int fd() const { return fd_; }
    void signal();
    bool signalled() const; // without waiting

private:
    int fd_;
};

} // namespace kwb
