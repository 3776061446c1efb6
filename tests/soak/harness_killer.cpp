#include "tests/soak/harness_killer.h"

#include "engine/process/process_table.h"

#include <csignal>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <unistd.h>

namespace kwb::test {

namespace {

std::string commandLine(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (char& c : text)
        if (c == '\0')
            c = ' ';
    return text;
}

} // namespace

HarnessKiller::HarnessKiller(std::uint32_t seed, std::chrono::milliseconds minInterval,
                             std::chrono::milliseconds maxInterval)
    : random_(seed ^ 0x5eedu), minInterval_(minInterval), maxInterval_(maxInterval),
      thread_([this] { run(); }) {}

HarnessKiller::~HarnessKiller() {
    stop();
}

std::vector<HarnessKiller::Kill> HarnessKiller::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
    std::lock_guard lock(mutex_);
    return kills_;
}

void HarnessKiller::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        const auto span = (maxInterval_ - minInterval_).count();
        const auto pause =
            minInterval_ + std::chrono::milliseconds(span > 0 ? random_() % span : 0);
        if (wake_.wait_for(lock, pause, [this] { return stopping_; }))
            return;
        // A stage child is forked from the server without exec, so it shares the server's
        // command line: the server is the fork_server process whose parent is not one.
        std::map<int, bool> forkServerProcess;
        std::vector<ProcessEntry> harness;
        for (const ProcessEntry& process : descendants(getpid())) {
            const std::string command = commandLine(process.pid);
            forkServerProcess[process.pid] = command.find("fork_server") != std::string::npos;
            if (command.find("kwb_harness") != std::string::npos)
                harness.push_back(process);
        }
        if (harness.empty())
            continue;
        const ProcessEntry& victim = harness[random_() % harness.size()];
        const bool server = forkServerProcess[victim.pid] && !forkServerProcess[victim.parentPid];
        if (::kill(victim.pid, SIGKILL) == 0)
            kills_.push_back({std::chrono::system_clock::now(), victim.pid, server});
    }
}

} // namespace kwb::test
