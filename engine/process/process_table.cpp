#include "engine/process/process_table.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace kwb {

std::vector<ProcessEntry> readProcessTable() {
    std::vector<ProcessEntry> table;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line))
            continue;
        // The command name may hold spaces and parentheses; fields resume after the last ')'.
        const auto open = line.find('(');
        const auto close = line.rfind(')');
        if (open == std::string::npos || close == std::string::npos || close < open)
            continue;
        ProcessEntry process;
        process.pid = std::stoi(name);
        process.name = line.substr(open + 1, close - open - 1);
        std::istringstream rest(line.substr(close + 1));
        if (rest >> process.state >> process.parentPid)
            table.push_back(std::move(process));
    }
    return table;
}

std::vector<int> descendantPids(int root) {
    std::map<int, std::vector<int>> children;
    for (const ProcessEntry& process : readProcessTable())
        if (process.state != 'Z')
            children[process.parentPid].push_back(process.pid);
    std::vector<int> result;
    std::vector<int> frontier{root};
    while (!frontier.empty()) {
        const int pid = frontier.back();
        frontier.pop_back();
        for (int child : children[pid]) {
            result.push_back(child);
            frontier.push_back(child);
        }
    }
    return result;
}

} // namespace kwb
