#include "engine/process/judge_keeper.h"

#include <algorithm>
#include <csignal>
#include <map>
#include <optional>
#include <sys/types.h>

namespace kwb {
namespace {

// bubblewrap's own processes (the one kwb starts and, with a PID namespace, its init) carry the
// binary's name; nothing below the judge is visited, so a candidate's process of that name
// never is.
bool isSandboxWrapper(const ProcessEntry& process) {
    return process.name == "bwrap";
}

// Stopped by a signal; 't' (stopped by a tracer: a debugger the user attached) is left alone.
bool stoppedBySignal(const ProcessEntry& process) {
    return process.state == 'T';
}

} // namespace

std::vector<ProcessEntry> ownProcessesAtTheTop(const ProcessEntry& root,
                                               const std::vector<ProcessEntry>& tree, int levels) {
    std::map<int, std::vector<const ProcessEntry*>> children;
    for (const auto& process : tree)
        children[process.parentPid].push_back(&process);
    std::vector<ProcessEntry> own;
    // (process, levels left to it and below it)
    std::vector<std::pair<const ProcessEntry*, int>> frontier{{&root, levels}};
    while (!frontier.empty()) {
        const auto [process, left] = frontier.back();
        frontier.pop_back();
        if (left <= 0)
            continue;
        own.push_back(*process);
        const int below = isSandboxWrapper(*process) ? left : left - 1;
        for (const ProcessEntry* child : children[process->pid])
            frontier.emplace_back(child, below);
    }
    return own;
}

JudgeKeeper::JudgeKeeper(int rootPid, int levels) : root_(rootPid), levels_(levels) {}

void JudgeKeeper::check(const std::vector<ProcessEntry>& tree) {
    if (levels_ <= 0)
        return;
    const std::optional<ProcessEntry> root = readProcess(root_);
    if (!root)
        return;
    for (const ProcessEntry& process : ownProcessesAtTheTop(*root, tree, levels_)) {
        if (!stoppedBySignal(process) || ::kill(process.pid, SIGCONT) != 0)
            continue;
        ++continued_;
        const std::string name = process.name + " (pid " + std::to_string(process.pid) + ")";
        if (std::find(names_.begin(), names_.end(), name) == names_.end())
            names_.push_back(name);
    }
}

std::string JudgeKeeper::finding() const {
    if (continued_ == 0)
        return {};
    std::string who;
    for (const auto& name : names_)
        who += (who.empty() ? "" : ", ") + name;
    return "kwb found its own stage processes stopped (SIGSTOP) " + std::to_string(continued_) +
           " time(s) and continued them (" + who +
           "): only the candidate's processes can have stopped them, and the judge's timings "
           "and checks cannot be trusted";
}

} // namespace kwb
