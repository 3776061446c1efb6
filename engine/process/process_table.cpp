#include "engine/process/process_table.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <unistd.h>

namespace kwb {

namespace {

// The whole file, read with one read(): watchdogs scan every process several times a second, and
// iostreams cost ten times more. Whole, because the command name may hold a newline
// (prctl(PR_SET_NAME, "x\n")): a line reader would end inside it and lose the process.
std::string readStat(const char* path) {
    char buffer[1024];
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return {};
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    ::close(fd);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
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
    // Fields after the name, space-separated: 3 state, 4 ppid, ..., 22 starttime.
    const char* cursor = line.c_str() + close + 1;
    char* end = nullptr;
    for (int field = 3; field <= 22; ++field) {
        while (*cursor == ' ')
            ++cursor;
        if (*cursor == '\0')
            return field > 4; // state and parent are what a table needs
        if (field == 3)
            process.state = *cursor;
        else if (field == 4)
            process.parentPid = static_cast<int>(std::strtol(cursor, &end, 10));
        else if (field == 22)
            process.startTime = std::strtoull(cursor, &end, 10);
        while (*cursor != ' ' && *cursor != '\0')
            ++cursor;
    }
    return true;
}

} // namespace

std::vector<ProcessEntry> readProcessTable() {
    std::vector<ProcessEntry> table;
    DIR* proc = ::opendir("/proc");
    if (!proc)
        return table;
    char path[64];
    while (const dirent* entry = ::readdir(proc)) {
        const char* name = entry->d_name;
        if (*name < '1' || *name > '9' || std::strspn(name, "0123456789") != std::strlen(name))
            continue;
        std::snprintf(path, sizeof path, "/proc/%s/stat", name);
        ProcessEntry process;
        if (parseStat(readStat(path), std::atoi(name), process))
            table.push_back(std::move(process));
    }
    ::closedir(proc);
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

std::optional<ProcessEntry> readProcess(int pid) {
    ProcessEntry process;
    if (!parseStat(readStat(("/proc/" + std::to_string(pid) + "/stat").c_str()), pid, process))
        return std::nullopt;
    return process;
}

std::uint64_t processStartTime(int pid) {
    const std::optional<ProcessEntry> process = readProcess(pid);
    return process ? process->startTime : 0;
}

} // namespace kwb
