#pragma once

#include "agent/tools/shell/child_process.h"
#include "engine/process/head_tail_capper.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace kwb::agent {

// What BashOutput and KillBash report about one job.
struct JobReport {
    bool found = false;
    std::string id;
    std::string command;
    std::string newOutput; // since the last report, head and tail kept
    std::size_t omittedBytes = 0;
    bool running = false;
    bool killed = false;
    std::optional<ChildExit> exit;

    std::string statusText() const; // "running", "exited with code 0", "killed", ...
};

// Commands the agent started with run_in_background: each in a sandboxed process of its own,
// output collected as it comes (a job never blocks on a full pipe) and handed out once.
// Destroying the table kills every job.
class BackgroundJobs {
public:
    explicit BackgroundJobs(std::size_t maxRunning = 8, std::size_t bufferBytes = 1 << 20);
    ~BackgroundJobs();

    // Returns the new job's id, or an empty string with `error` set.
    std::string start(ChildSpec spec, const std::string& command, std::string& error);
    JobReport read(const std::string& id);
    JobReport kill(const std::string& id, std::chrono::milliseconds wait = std::chrono::seconds(5));
    std::size_t runningCount() const;

private:
    struct Job {
        std::string command;
        std::mutex mutex;
        HeadTailCapper unread;
        bool killed = false;
        std::unique_ptr<ChildProcess> process;
        explicit Job(std::size_t limit) : unread(limit) {}
    };
    JobReport report(const std::string& id, Job& job);

    std::size_t maxRunning_;
    std::size_t bufferBytes_;
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<Job>> jobs_;
    int nextId_ = 1;
};

} // namespace kwb::agent
