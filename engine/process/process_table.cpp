#include "engine/process/process_table.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

namespace kwb {

namespace {

// The whole file: the command name may hold a newline (prctl(PR_SET_NAME, "x\n")), so a
// getline would end inside it and the process would vanish from the table.
std::string readStat(const std::filesystem::path& path) {
    std::ifstream stat(path);
    return std::string((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
}

// One /proc/PID/stat line; false when it does not parse (the process ended while read).
bool parseStat(const std::string& line, int pid, ProcessEntry& process) {
    // The command name may hold spaces and parentheses; fields resume after the last ')'.
    const auto open = line.find('(');
    const auto close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open)
        return false;
    process.pid = pid;
    process.name = line.substr(open + 1, close - open - 1);
    std::istringstream rest(line.substr(close + 1));
    if (!(rest >> process.state >> process.parentPid))
        return false;
    // Fields 5 to 21 (pgrp ... itrealvalue), then field 22: starttime.
    std::string skipped;
    for (int field = 5; field <= 21 && rest >> skipped; ++field) {
    }
    rest >> process.startTime;
    return true;
}

} // namespace

std::vector<ProcessEntry> readProcessTable() {
    std::vector<ProcessEntry> table;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        ProcessEntry process;
        if (parseStat(readStat(entry.path() / "stat"), std::stoi(name), process))
            table.push_back(std::move(process));
    }
    return table;
}

std::vector<ProcessEntry> descendants(int root) {
    std::map<int, std::vector<ProcessEntry>> children;
    for (ProcessEntry& process : readProcessTable())
        if (process.state != 'Z')
            children[process.parentPid].push_back(std::move(process));
    std::vector<ProcessEntry> result;
    std::vector<int> frontier{root};
    while (!frontier.empty()) {
        const int pid = frontier.back();
        frontier.pop_back();
        for (ProcessEntry& child : children[pid]) {
            frontier.push_back(child.pid);
            result.push_back(std::move(child));
        }
    }
    return result;
}

std::vector<int> descendantPids(int root) {
    std::vector<int> pids;
    for (const ProcessEntry& process : descendants(root))
        pids.push_back(process.pid);
    return pids;
}

std::uint64_t processStartTime(int pid) {
    ProcessEntry process;
    return parseStat(readStat("/proc/" + std::to_string(pid) + "/stat"), pid, process)
               ? process.startTime
               : 0;
}

} // namespace kwb
