#include "engine/process/tree_watchdog.h"

#include "engine/process/process_table.h"

#include <csignal>
#include <cstdio>
#include <fstream>
#include <set>
#include <sys/statvfs.h>
#include <sys/types.h>

namespace kwb {
namespace {

// Reading the process table costs about a millisecond per few hundred processes: often enough to
// stop a fork bomb or an allocation spree early, rarely enough to stay out of the way.
constexpr auto kTreeInterval = std::chrono::milliseconds(50);
constexpr auto kDiskInterval = std::chrono::milliseconds(100);

std::uint64_t availableBytes(const std::string& path) {
    struct statvfs fs {};
    if (statvfs(path.c_str(), &fs) != 0)
        return 0;
    return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

// The file system's id, to watch each file system once however many folders lie on it.
unsigned long fileSystemId(const std::string& path) {
    struct statvfs fs {};
    return statvfs(path.c_str(), &fs) == 0 ? fs.f_fsid : 0;
}

} // namespace

std::uint64_t privateMemoryBytes(int pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string key;
    std::uint64_t total = 0;
    while (status >> key) {
        if (key == "RssAnon:" || key == "RssShmem:") {
            std::uint64_t kib = 0;
            status >> kib;
            total += kib * 1024;
        }
        status.ignore(1 << 12, '\n');
    }
    return total;
}

std::string byteSize(std::uint64_t bytes) {
    char text[32];
    if (bytes >= (1ULL << 30))
        std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1ULL << 30));
    else
        std::snprintf(text, sizeof text, "%.0f MiB", static_cast<double>(bytes) / (1ULL << 20));
    return text;
}

TreeWatchdog::TreeWatchdog(int rootPid, TreeBudget budget)
    : root_(rootPid), budget_(std::move(budget)) {
    seen_[root_] = processStartTime(root_);
    if (budget_.diskBytes == 0)
        return;
    std::set<unsigned long> watched;
    for (const auto& path : budget_.diskPaths) {
        const unsigned long id = fileSystemId(path);
        if (id != 0 && watched.insert(id).second)
            mounts_.push_back({path, availableBytes(path)});
    }
}

std::string TreeWatchdog::check() {
    const auto now = std::chrono::steady_clock::now();
    if (!budget_.any() || now < nextTreeCheck_)
        return {};
    nextTreeCheck_ = now + kTreeInterval;
    const std::vector<ProcessEntry> tree = descendants(root_);
    for (const auto& process : tree)
        seen_.emplace(process.pid, process.startTime);
    if (budget_.maxProcesses > 0 && tree.size() + 1 > budget_.maxProcesses)
        return "process limit (" + std::to_string(budget_.maxProcesses) + ")";
    if (budget_.memoryBytes > 0) {
        lastMemory_ = privateMemoryBytes(root_);
        for (const auto& process : tree)
            lastMemory_ += privateMemoryBytes(process.pid);
        if (lastMemory_ > budget_.memoryBytes)
            return "memory limit (" + byteSize(budget_.memoryBytes) + ": " + byteSize(lastMemory_) +
                   " in " + std::to_string(tree.size() + 1) + " processes)";
    }
    return checkDisk();
}

std::string TreeWatchdog::checkDisk() {
    const auto now = std::chrono::steady_clock::now();
    if (mounts_.empty() || now < nextDiskCheck_)
        return {};
    nextDiskCheck_ = now + kDiskInterval;
    for (const auto& mount : mounts_) {
        const std::uint64_t available = availableBytes(mount.path);
        if (available < mount.availableAtStart &&
            mount.availableAtStart - available > budget_.diskBytes)
            return "disk limit (" + byteSize(budget_.diskBytes) + " on the file system of " +
                   mount.path + ": " + byteSize(mount.availableAtStart - available) + " written)";
    }
    return {};
}

void TreeWatchdog::killAll() {
    if (!budget_.any())
        return; // a trusted child: its process group is all there is to end
    for (const auto& process : descendants(root_))
        seen_.emplace(process.pid, process.startTime);
    for (const auto& [pid, startTime] : seen_)
        if (pid > 1 && startTime != 0 && processStartTime(pid) == startTime)
            ::kill(pid, SIGKILL);
}

} // namespace kwb
