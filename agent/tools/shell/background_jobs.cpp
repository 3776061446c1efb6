#include "agent/tools/shell/background_jobs.h"

#include <csignal>
#include <cstring>

namespace kwb::agent {

std::string JobReport::statusText() const {
    if (running)
        return "running";
    if (killed)
        return "killed";
    if (!exit)
        return "finished";
    if (!exit->limitExceeded.empty())
        return "killed: " + exit->limitExceeded + " exceeded";
    if (exit->exitedNormally)
        return "exited with code " + std::to_string(exit->exitCode);
    const char* name = sigabbrev_np(exit->signal);
    return "killed by signal " + std::to_string(exit->signal) +
           (name ? std::string(" (SIG") + name + ")" : std::string());
}

BackgroundJobs::BackgroundJobs(std::size_t maxRunning, std::size_t bufferBytes)
    : maxRunning_(maxRunning), bufferBytes_(bufferBytes) {}

BackgroundJobs::~BackgroundJobs() {
    std::map<std::string, std::shared_ptr<Job>> jobs;
    {
        std::lock_guard lock(mutex_);
        jobs.swap(jobs_);
    }
    for (auto& [id, job] : jobs)
        job->process.reset();
}

std::size_t BackgroundJobs::runningCount() const {
    std::lock_guard lock(mutex_);
    std::size_t running = 0;
    for (const auto& [id, job] : jobs_)
        running += job->process && !job->process->exitStatus();
    return running;
}

std::string BackgroundJobs::start(ChildSpec spec, const std::string& command, std::string& error) {
    if (runningCount() >= maxRunning_) {
        error = std::to_string(maxRunning_) +
                " background jobs are already running; stop one with KillBash first";
        return {};
    }
    auto job = std::make_shared<Job>(bufferBytes_);
    job->command = command;
    Job* raw = job.get();
    job->process = std::make_unique<ChildProcess>(std::move(spec), [raw](std::string_view data) {
        std::lock_guard lock(raw->mutex);
        raw->unread.append(data);
    });
    if (!job->process->started()) {
        error = job->process->startError();
        return {};
    }
    std::lock_guard lock(mutex_);
    const std::string id = "job-" + std::to_string(nextId_++);
    jobs_[id] = std::move(job);
    return id;
}

JobReport BackgroundJobs::report(const std::string& id, Job& job) {
    JobReport r;
    r.found = true;
    r.id = id;
    r.command = job.command;
    r.exit = job.process->exitStatus();
    r.running = !r.exit;
    std::lock_guard lock(job.mutex);
    r.killed = job.killed;
    HeadTailCapper::Capped taken = job.unread.take();
    r.newOutput = std::move(taken.text);
    r.omittedBytes = taken.omittedBytes;
    return r;
}

JobReport BackgroundJobs::read(const std::string& id) {
    std::shared_ptr<Job> job;
    {
        std::lock_guard lock(mutex_);
        auto it = jobs_.find(id);
        if (it == jobs_.end())
            return {};
        job = it->second;
    }
    return report(id, *job);
}

JobReport BackgroundJobs::kill(const std::string& id, std::chrono::milliseconds wait) {
    std::shared_ptr<Job> job;
    {
        std::lock_guard lock(mutex_);
        auto it = jobs_.find(id);
        if (it == jobs_.end())
            return {};
        job = it->second;
    }
    if (!job->process->exitStatus()) {
        {
            std::lock_guard lock(job->mutex);
            job->killed = true;
        }
        job->process->signalTree(SIGKILL);
        job->process->waitForExit(wait);
    }
    return report(id, *job);
}

} // namespace kwb::agent
