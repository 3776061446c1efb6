#include "engine/process/job_queue.h"

#include <algorithm>

namespace kwb {

JobQueue::JobQueue() : thread_([this](std::stop_token stop) { run(stop); }) {}

JobQueue::~JobQueue() {
    {
        std::lock_guard lock(mutex_);
        queue_.clear();
        if (runningStop_)
            runningStop_->request_stop();
    }
    thread_.request_stop();
    wake_.notify_all();
}

std::uint64_t JobQueue::submit(const std::string& tag, Job job, std::size_t* replaced) {
    std::uint64_t id;
    std::size_t removed = 0;
    {
        std::lock_guard lock(mutex_);
        id = nextId_++;
        if (!tag.empty()) {
            auto stale = std::remove_if(queue_.begin(), queue_.end(),
                                        [&](const Entry& e) { return e.tag == tag; });
            removed = static_cast<std::size_t>(queue_.end() - stale);
            queue_.erase(stale, queue_.end());
            if (running_ && runningTag_ == tag && runningStop_)
                runningStop_->request_stop();
        }
        queue_.push_back({id, tag, std::move(job)});
    }
    if (replaced)
        *replaced = removed;
    wake_.notify_one();
    return id;
}

std::size_t JobQueue::pendingCount() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
}

void JobQueue::waitIdle() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !running_; });
}

void JobQueue::run(std::stop_token threadStop) {
    while (true) {
        Entry entry;
        std::stop_token jobStop;
        {
            std::unique_lock lock(mutex_);
            if (!wake_.wait(lock, threadStop, [&] { return !queue_.empty(); }))
                return;
            entry = std::move(queue_.front());
            queue_.pop_front();
            running_ = true;
            runningTag_ = entry.tag;
            runningStop_ = std::make_unique<std::stop_source>();
            jobStop = runningStop_->get_token();
        }
        entry.job(jobStop);
        {
            std::lock_guard lock(mutex_);
            running_ = false;
            runningTag_.clear();
            runningStop_.reset();
        }
        idle_.notify_all();
    }
}

} // namespace kwb
