#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

namespace kwb {

// The engine thread: one worker running jobs in order. A job submitted with the tag of a job
// still waiting replaces it, and asks a running job with that tag to stop, so hovering,
// scrubbing and typing never pile up work (latest request wins).
class JobQueue {
public:
    using Job = std::function<void(std::stop_token)>;

    JobQueue();
    ~JobQueue(); // cancels what is queued, asks the running job to stop, joins the thread
    JobQueue(const JobQueue&) = delete;
    JobQueue& operator=(const JobQueue&) = delete;

    // Returns the job's id; ids increase, so the newest result per tag is easy to recognise.
    // `replaced` receives how many waiting jobs this one displaced (they will never run).
    std::uint64_t submit(const std::string& tag, Job job, std::size_t* replaced = nullptr);

    // Jobs waiting to run (not counting the running one).
    std::size_t pendingCount() const;

    // Blocks until the queue is empty and no job runs (tests, orderly shutdown).
    void waitIdle();

private:
    struct Entry {
        std::uint64_t id;
        std::string tag;
        Job job;
    };
    void run(std::stop_token threadStop);

    mutable std::mutex mutex_;
    std::condition_variable_any wake_;
    std::condition_variable idle_;
    std::deque<Entry> queue_;
    std::uint64_t nextId_ = 1;
    std::string runningTag_;
    std::unique_ptr<std::stop_source> runningStop_;
    bool running_ = false;
    std::jthread thread_; // last member: started after, and joined before, the state above
};

} // namespace kwb
