#include "engine/diagnostics/diagnostics_service.h"

#include <algorithm>

namespace kwb::diagnostics {

DiagnosticsService::DiagnosticsService(Callback callback)
    : DiagnosticsService(std::move(callback), Options{}) {}

DiagnosticsService::DiagnosticsService(Callback callback, Options options)
    : callback_(std::move(callback)), options_(std::move(options)),
      thread_([this](std::stop_token stop) { run(stop); }) {}

DiagnosticsService::~DiagnosticsService() {
    {
        std::lock_guard lock(mutex_);
        pending_.clear();
        if (runningStop_)
            runningStop_->request_stop();
    }
    thread_.request_stop();
    wake_.notify_all();
    // The jthread joins here, before the members it uses go away.
}

std::uint64_t DiagnosticsService::submit(const std::string& path, const std::string& text,
                                         const std::string& arch) {
    std::uint64_t generation = 0;
    {
        std::lock_guard lock(mutex_);
        generation = nextGeneration_++;
        pending_[path] = {generation, text, arch,
                          std::chrono::steady_clock::now() + options_.debounce};
        latest_[path] = generation;
        if (runningStop_ && runningPath_ == path)
            runningStop_->request_stop(); // its result would be stale anyway
    }
    wake_.notify_all();
    return generation;
}

void DiagnosticsService::waitIdle() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return pending_.empty() && !runningStop_; });
}

std::uint64_t DiagnosticsService::startedCount() const {
    std::lock_guard lock(mutex_);
    return started_;
}

std::uint64_t DiagnosticsService::cancelledCount() const {
    std::lock_guard lock(mutex_);
    return cancelled_;
}

void DiagnosticsService::run(std::stop_token threadStop) {
    std::unique_lock lock(mutex_);
    while (!threadStop.stop_requested()) {
        if (pending_.empty()) {
            idle_.notify_all();
            wake_.wait(lock, threadStop, [this] { return !pending_.empty(); });
            continue;
        }
        // The file whose quiet period ends first; a newer submit moves its deadline on.
        auto next =
            std::min_element(pending_.begin(), pending_.end(), [](const auto& a, const auto& b) {
                return a.second.readyAt < b.second.readyAt;
            });
        if (std::chrono::steady_clock::now() < next->second.readyAt) {
            const auto until = next->second.readyAt;
            const std::uint64_t seen = nextGeneration_;
            wake_.wait_until(lock, threadStop, until, [&] { return nextGeneration_ != seen; });
            continue;
        }
        const std::string path = next->first;
        const Pending request = std::move(next->second);
        pending_.erase(next);
        runningPath_ = path;
        runningStop_ = std::make_unique<std::stop_source>();
        const std::stop_token stop = runningStop_->get_token();
        ++started_;
        lock.unlock();

        KernelCheckRequest check;
        check.path = path;
        check.text = request.text;
        check.arch = request.arch;
        check.includeDirs = options_.includeDirs;
        check.wantSass = options_.wantSass;
        check.syntaxOnly = options_.syntaxFirst;
        for (bool done = false; !done;) {
            auto result = std::make_shared<const KernelCheckResult>(options_.check(check, stop));
            // The full compile follows only a clean syntax-only pass.
            done = !result->syntaxOnly || result->errorCount() > 0;
            check.syntaxOnly = false;

            lock.lock();
            const bool newest = latest_[path] == request.generation && !result->cancelled &&
                                !stop.stop_requested() && !threadStop.stop_requested();
            if (result->cancelled || stop.stop_requested())
                ++cancelled_;
            if (!newest) {
                lock.unlock();
                break;
            }
            // Delivered outside the lock, so the callback may submit again. runningStop_ stays
            // set meanwhile, so waitIdle() returns only after the delivery.
            lock.unlock();
            callback_(path, request.generation, std::move(result));
        }
        lock.lock();
        runningStop_.reset();
        runningPath_.clear();
    }
    idle_.notify_all();
}

} // namespace kwb::diagnostics
