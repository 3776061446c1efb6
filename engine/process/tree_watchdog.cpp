#include "engine/process/tree_watchdog.h"

#include "engine/process/process_table.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <string_view>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

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

// Walking the folders costs a stat per file: only once the free space says there may be a
// flood, and then at most this often.
constexpr auto kFolderInterval = std::chrono::milliseconds(500);

// Bytes allocated to the regular files below `folder` (links not followed, other file systems
// included: a bind mount inside counts where it is written) that `counts` accepts.
template <typename Filter>
std::uint64_t allocatedBytesBelow(const std::string& folder, Filter counts) {
    namespace fs = std::filesystem;
    std::uint64_t bytes = 0;
    std::error_code ec;
    const auto options = fs::directory_options::skip_permission_denied;
    for (fs::recursive_directory_iterator it(folder, options, ec), end; !ec && it != end;
         it.increment(ec)) {
        struct stat info {};
        if (::lstat(it->path().c_str(), &info) == 0 && S_ISREG(info.st_mode) && counts(info))
            bytes += static_cast<std::uint64_t>(info.st_blocks) * 512;
    }
    return bytes;
}

std::uint64_t allocatedBytesBelow(const std::string& folder) {
    return allocatedBytesBelow(folder, [](const struct stat&) { return true; });
}

// Bytes of this user's files below a shared folder that changed status at or after `since`
// (seconds of the wall clock): what the tree may have written among other processes' files.
std::uint64_t newFileBytesBelow(const std::string& folder, std::int64_t since) {
    const uid_t user = ::getuid();
    return allocatedBytesBelow(folder, [&](const struct stat& info) {
        return info.st_uid == user && info.st_ctim.tv_sec >= since;
    });
}

// Files the processes hold open after deleting them: /proc/PID/fd/N names "PATH (deleted)",
// and stat through the link reaches the file itself. Each file once.
std::uint64_t deletedOpenBytes(const std::vector<int>& pids) {
    namespace fs = std::filesystem;
    std::set<std::pair<dev_t, ino_t>> counted;
    std::uint64_t bytes = 0;
    for (int pid : pids) {
        std::error_code ec;
        const fs::path fds = "/proc/" + std::to_string(pid) + "/fd";
        for (fs::directory_iterator it(fds, ec), end; !ec && it != end; it.increment(ec)) {
            char target[4096];
            const ssize_t length = ::readlink(it->path().c_str(), target, sizeof target - 1);
            const std::string_view suffix = " (deleted)";
            if (length <= static_cast<ssize_t>(suffix.size()) ||
                std::string_view(target, length).substr(length - suffix.size()) != suffix)
                continue;
            struct stat info {};
            if (::stat(it->path().c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
                counted.insert({info.st_dev, info.st_ino}).second)
                bytes += static_cast<std::uint64_t>(info.st_blocks) * 512;
        }
    }
    return bytes;
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
    : root_(rootPid), budget_(std::move(budget)), keeper_(rootPid, budget_.ownLevels) {
    seen_[root_] = processStartTime(root_);
    if (budget_.diskBytes == 0)
        return;
    std::set<dev_t> watched;
    std::vector<std::string> all = budget_.diskPaths;
    all.insert(all.end(), budget_.sharedDiskPaths.begin(), budget_.sharedDiskPaths.end());
    for (std::string path : all) {
        const dev_t device = deviceOf(path);
        const auto available = device != 0 ? availableBytes(path) : std::nullopt;
        if (available && watched.insert(device).second)
            mounts_.push_back({path, *available});
    }
    if (budget_.attributeDiskToTree)
        for (const auto& folder : budget_.diskPaths)
            folderBytesAtStart_ += allocatedBytesBelow(folder);
    startSeconds_ = static_cast<std::int64_t>(::time(nullptr)) - 1;
}

std::uint64_t TreeWatchdog::bytesWrittenByTree(const std::vector<ProcessEntry>& tree) const {
    std::uint64_t now = 0;
    for (const auto& folder : budget_.diskPaths)
        now += allocatedBytesBelow(folder);
    std::vector<int> pids = {root_};
    for (const auto& process : tree)
        pids.push_back(process.pid);
    std::uint64_t grown = now > folderBytesAtStart_ ? now - folderBytesAtStart_ : 0;
    for (const auto& folder : budget_.sharedDiskPaths)
        grown += newFileBytesBelow(folder, startSeconds_);
    return grown + deletedOpenBytes(pids);
}

std::string TreeWatchdog::check() {
    const auto now = std::chrono::steady_clock::now();
    if (!budget_.any() || now < nextTreeCheck_)
        return {};
    nextTreeCheck_ = now + kTreeInterval;
    const std::vector<ProcessEntry> tree = descendants(root_);
    for (const auto& process : tree)
        seen_.insert_or_assign(process.pid, process.startTime); // a reused pid: the new one
    keeper_.check(tree);
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
    return checkDisk(tree);
}

std::string TreeWatchdog::checkDisk(const std::vector<ProcessEntry>& tree) {
    const auto shrunk = std::find_if(mounts_.begin(), mounts_.end(), [&](const Mount& mount) {
        const auto available = availableBytes(mount.path);
        return available && *available < mount.availableAtStart &&
               mount.availableAtStart - *available > budget_.diskBytes;
    });
    const bool spaceShrankPastBudget = shrunk != mounts_.end();
    if (spaceShrankPastBudget && !budget_.attributeDiskToTree)
        return "disk limit (" + byteSize(budget_.diskBytes) + " on the file system of " +
               shrunk->path + ")";
    const auto now = std::chrono::steady_clock::now();
    if (!spaceShrankPastBudget || now < nextFolderCheck_)
        return {};
    nextFolderCheck_ = now + kFolderInterval;
    const std::uint64_t written = bytesWrittenByTree(tree);
    if (written <= budget_.diskBytes)
        return {}; // someone else's writes: not this tree's to answer for
    return "disk limit (" + byteSize(budget_.diskBytes) + ": " + byteSize(written) +
           " written into its folders)";
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
