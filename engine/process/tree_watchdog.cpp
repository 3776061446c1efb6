#include "engine/process/tree_watchdog.h"

#include "engine/process/process_table.h"

#include <csignal>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

namespace kwb {
namespace {

// Reading the process table costs about a millisecond per hundred processes: often enough to stop
// a fork bomb or an allocation spree early, rarely enough to stay out of the way.
constexpr auto kTreeInterval = std::chrono::milliseconds(100);

// Free bytes for unprivileged writers; nullopt when it cannot be read now (the folder was
// removed, say): a sample skipped, never a verdict.
std::optional<std::uint64_t> availableBytes(const std::string& path) {
    struct statvfs fs {};
    if (statvfs(path.c_str(), &fs) != 0)
        return std::nullopt;
    return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

// The device a folder (or its nearest existing parent, which `path` becomes) lives on, to watch
// each file system once however many folders lie on it; 0 when none of it exists.
dev_t deviceOf(std::string& path) {
    struct stat info {};
    while (!path.empty() && ::stat(path.c_str(), &info) != 0) {
        const auto slash = path.find_last_of('/');
        path = slash == 0 ? "/" : slash == std::string::npos ? "" : path.substr(0, slash);
    }
    return path.empty() ? 0 : info.st_dev;
}

// "Key:   1234 kB" lines of a /proc file, summed over `keys`; false when none was present.
bool sumKiB(const std::string& file, std::initializer_list<const char*> keys,
            std::uint64_t& bytes) {
    std::ifstream in(file);
    std::string key;
    bool found = false;
    while (in >> key) {
        for (const char* wanted : keys)
            if (key == wanted) {
                std::uint64_t kib = 0;
                in >> kib;
                bytes += kib * 1024;
                found = true;
            }
        in.ignore(1 << 12, '\n');
    }
    return found;
}

} // namespace

std::uint64_t residentPrivateBytes(int pid) {
    std::uint64_t bytes = 0;
    sumKiB("/proc/" + std::to_string(pid) + "/status", {"RssAnon:", "RssShmem:"}, bytes);
    return bytes;
}

std::uint64_t privateMemoryBytes(int pid) {
    // Proportional set size: a page shared after fork (the warm worker's server and its forked
    // children share torch and their inputs) is counted once over all who share it, not in
    // each. RssAnon + RssShmem where the kernel has no Pss_Anon (before Linux 5.14).
    std::uint64_t bytes = 0;
    if (sumKiB("/proc/" + std::to_string(pid) + "/smaps_rollup", {"Pss_Anon:", "Pss_Shmem:"},
               bytes))
        return bytes;
    return residentPrivateBytes(pid);
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
    std::set<dev_t> watched;
    for (std::string path : budget_.diskPaths) {
        const dev_t device = deviceOf(path);
        const auto available = device != 0 ? availableBytes(path) : std::nullopt;
        if (available && watched.insert(device).second)
            mounts_.push_back({path, *available});
    }
}

std::string TreeWatchdog::check() {
    const auto now = std::chrono::steady_clock::now();
    if (!budget_.any() || now < nextTreeCheck_)
        return {};
    nextTreeCheck_ = now + kTreeInterval;
    const std::vector<ProcessEntry> tree = descendants(root_);
    for (const auto& process : tree)
        seen_.insert_or_assign(process.pid, process.startTime); // a reused pid: the new one
    if (budget_.maxProcesses > 0 && tree.size() + 1 > budget_.maxProcesses)
        return "process limit (" + std::to_string(budget_.maxProcesses) + ")";
    if (budget_.memoryBytes > 0) {
        // Resident private pages first (cheap, and never less than the proportional share);
        // the proportional sum only when that is over the budget.
        auto treeSum = [&](std::uint64_t (*bytesOf)(int)) {
            std::uint64_t sum = bytesOf(root_);
            for (const auto& process : tree)
                sum += bytesOf(process.pid);
            return sum;
        };
        lastMemory_ = treeSum(residentPrivateBytes);
        if (lastMemory_ > budget_.memoryBytes)
            lastMemory_ = treeSum(privateMemoryBytes);
        if (lastMemory_ > budget_.memoryBytes)
            return "memory limit (" + byteSize(budget_.memoryBytes) + ": " + byteSize(lastMemory_) +
                   " in " + std::to_string(tree.size() + 1) + " processes)";
    }
    return checkDisk();
}

std::string TreeWatchdog::checkDisk() const {
    for (const auto& mount : mounts_) {
        const auto available = availableBytes(mount.path);
        if (available && *available < mount.availableAtStart &&
            mount.availableAtStart - *available > budget_.diskBytes)
            return "disk limit (" + byteSize(budget_.diskBytes) + " on the file system of " +
                   mount.path + ": " + byteSize(mount.availableAtStart - *available) + " written)";
    }
    return {};
}

void TreeWatchdog::killAll() {
    if (!budget_.any())
        return; // a trusted child: its process group is all there is to end
    // The root's pid may already belong to another process (reaped and reused): its children
    // are not this tree's.
    if (processStartTime(root_) == seen_[root_])
        for (const auto& process : descendants(root_))
            seen_.insert_or_assign(process.pid, process.startTime);
    for (const auto& [pid, startTime] : seen_)
        if (pid > 1 && startTime != 0 && processStartTime(pid) == startTime)
            ::kill(pid, SIGKILL);
}

} // namespace kwb
