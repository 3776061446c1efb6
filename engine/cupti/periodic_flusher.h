#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace kwb::cupti {

// Calls `flush` every `interval` on a thread of its own, so records reach the engine while the
// run goes on instead of only when a CUPTI buffer fills up. stop() wakes and joins it at once.
class PeriodicFlusher {
public:
    PeriodicFlusher() = default;
    ~PeriodicFlusher();
    PeriodicFlusher(const PeriodicFlusher&) = delete;
    PeriodicFlusher& operator=(const PeriodicFlusher&) = delete;

    // False when the thread could not be created (the run then relies on the final flush).
    bool start(std::chrono::milliseconds interval, std::function<void()> flush);
    void stop();

private:
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

} // namespace kwb::cupti
