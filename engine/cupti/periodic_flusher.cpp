#include "engine/cupti/periodic_flusher.h"

#include <system_error>

namespace kwb::cupti {

PeriodicFlusher::~PeriodicFlusher() {
    stop();
}

bool PeriodicFlusher::start(std::chrono::milliseconds interval, std::function<void()> flush) {
    try {
        thread_ = std::thread([this, interval, flush = std::move(flush)] {
            std::unique_lock lock(mutex_);
            while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
                lock.unlock();
                flush();
                lock.lock();
            }
        });
    } catch (const std::system_error&) {
        return false;
    }
    return true;
}

void PeriodicFlusher::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id())
        thread_.join();
}

} // namespace kwb::cupti
