#include "tests/soak/harness_killer.h"

#include "engine/process/process_table.h"
#include "tests/test_files.h"

#include <algorithm>
#include <csignal>
#include <map>
#include <string>
#include <unistd.h>

namespace kwb::test {

namespace {

std::string commandLine(int pid) {
    std::string text = readText("/proc/" + std::to_string(pid) + "/cmdline");
    std::replace(text.begin(), text.end(), '\0', ' ');
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
        // A stage child is forked from the server's Python without exec, so it shares the
        // server's command line, and so does the bubblewrap around the server (its arguments
        // end with the server's): the server, or its sandbox, is a fork_server process whose
        // parent is not the server's Python.
        std::map<int, ProcessEntry> tree;
        std::map<int, std::string> commands;
        std::vector<int> harness;
        for (const ProcessEntry& process : descendants(getpid())) {
            commands[process.pid] = commandLine(process.pid);
            tree[process.pid] = process;
            if (commands[process.pid].find("kwb_harness") != std::string::npos)
                harness.push_back(process.pid);
        }
        if (harness.empty())
            continue;
        const auto runsServer = [&](int pid) {
            return commands[pid].find("fork_server") != std::string::npos;
        };
        const ProcessEntry& victim = tree[harness[random_() % harness.size()]];
        const auto parent = tree.find(victim.parentPid);
        const bool parentIsServerPython =
            parent != tree.end() && runsServer(parent->first) && parent->second.name != "bwrap";
        const bool server = runsServer(victim.pid) && !parentIsServerPython;
        if (::kill(victim.pid, SIGKILL) == 0)
            kills_.push_back({std::chrono::system_clock::now(), victim.pid, server});
    }
}

} // namespace kwb::test
