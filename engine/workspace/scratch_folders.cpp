#include "engine/workspace/scratch_folders.h"

#include "engine/system/content_hash.h"
#include "engine/system/tree_removal.h"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utility>

namespace fs = std::filesystem;

namespace kwb {
namespace {

constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// The names in the folder open as `fd`, "." and ".." left out.
std::vector<std::string> namesIn(int fd) {
    std::vector<std::string> names;
    const int copy = ::dup(fd);
    if (copy < 0)
        return names;
    DIR* folder = ::fdopendir(copy);
    if (!folder) {
        ::close(copy);
        return names;
    }
    ::rewinddir(folder);
    while (const dirent* entry = ::readdir(folder)) {
        const std::string_view name = entry->d_name;
        if (name != "." && name != "..")
            names.emplace_back(name);
    }
    ::closedir(folder);
    return names;
}

bool sameFile(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The folder `name` inside `parentFd`, opened and locked exclusively without waiting; -1 when
// it is no folder or someone holds it.
int lockedFolder(int parentFd, const std::string& name) {
    const int fd = ::openat(parentFd, name.c_str(), kFolderFlags);
    if (fd < 0)
        return -1;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

void addRemoval(ScratchTidy& tidy, const std::string& name, const TreeSweep& sweep) {
    tidy.removed.push_back(name);
    tidy.bytesFreed += sweep.bytes;
    tidy.complete = tidy.complete && sweep.complete;
}

// Takes a shared lock on the folder, waiting for a sweep that holds it exclusively for a
// moment. A holder that never lets go (nothing of kwb's does) is waited out for a few seconds:
// the folder is then used unlocked rather than the evaluation refused.
void lockShared(int fd) {
    for (int attempt = 0; attempt < 200; ++attempt) {
        if (::flock(fd, LOCK_SH | LOCK_NB) == 0 || errno != EWOULDBLOCK)
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
}

std::uint64_t environmentNumber(const char* name, std::uint64_t fallback) {
    const char* text = std::getenv(name);
    if (!text || !*text)
        return fallback;
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || text[0] == '-')
        return fallback;
    return value;
}

} // namespace

fs::path workspaceRunsFolder(const fs::path& cacheDirectory, const std::string& workspace,
                             const std::string& candidatePath) {
    return cacheDirectory / "runs" /
           ("ws-" + sha256Hex(workspace + "\n" + candidatePath).substr(0, 16));
}

bool isKeptScratchCache(std::string_view name) {
    static constexpr std::array<std::string_view, 5> kept = {"torch_extensions", "tmp", ".cache",
                                                             ".triton", ".nv"};
    for (const auto& k : kept)
        if (name == k)
            return true;
    return false;
}

std::optional<ScratchFolder> ScratchFolder::claim(const fs::path& workspaceRuns,
                                                  const std::string& runId, std::string* error) {
    auto failWith = [&](const std::string& why) -> std::optional<ScratchFolder> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    // Each step can meet a sweep or a tidy of another process that removes what it looks at; a
    // few rounds end every such race (each round starts from the path again).
    for (int attempt = 0; attempt < 8; ++attempt) {
        std::error_code ec;
        fs::create_directories(workspaceRuns, ec);
        ScratchFolder folder;
        folder.parentFd_ = ::open(workspaceRuns.c_str(), kFolderFlags);
        if (folder.parentFd_ < 0) {
            if (errno == ENOENT)
                continue;
            return failWith("cannot open " + workspaceRuns.string() + ": " + std::strerror(errno));
        }
        lockShared(folder.parentFd_);
        struct stat opened {
        }, named{};
        if (::fstat(folder.parentFd_, &opened) != 0 ||
            ::lstat(workspaceRuns.c_str(), &named) != 0 || !sameFile(opened, named))
            continue; // removed by a sweep while we waited for its lock
        folder.name_ = attempt == 0 ? runId : runId + "-" + std::to_string(attempt);
        if (::mkdirat(folder.parentFd_, folder.name_.c_str(), 0755) != 0) {
            if (errno == EEXIST)
                continue;
            return failWith("cannot create a scratch folder in " + workspaceRuns.string() + ": " +
                            std::strerror(errno));
        }
        folder.folderFd_ = lockedFolder(folder.parentFd_, folder.name_);
        if (folder.folderFd_ < 0)
            continue; // a tidy of another evaluation took it between mkdir and lock
        struct stat mine {
        }, listed{};
        if (::fstat(folder.folderFd_, &mine) != 0 ||
            ::fstatat(folder.parentFd_, folder.name_.c_str(), &listed, AT_SYMLINK_NOFOLLOW) != 0 ||
            !sameFile(mine, listed))
            continue; // ... and removed it before our lock
        folder.path_ = (workspaceRuns / folder.name_).string();
        return folder;
    }
    return failWith("cannot claim a scratch folder in " + workspaceRuns.string() +
                    ": it kept being removed");
}

ScratchFolder::ScratchFolder(ScratchFolder&& other) noexcept
    : parentFd_(std::exchange(other.parentFd_, -1)), folderFd_(std::exchange(other.folderFd_, -1)),
      name_(std::move(other.name_)), path_(std::move(other.path_)) {}

ScratchFolder& ScratchFolder::operator=(ScratchFolder&& other) noexcept {
    if (this != &other) {
        release();
        parentFd_ = std::exchange(other.parentFd_, -1);
        folderFd_ = std::exchange(other.folderFd_, -1);
        name_ = std::move(other.name_);
        path_ = std::move(other.path_);
    }
    return *this;
}

ScratchFolder::~ScratchFolder() {
    release();
}

void ScratchFolder::release() {
    // Removed while still locked, so that no tidy of another evaluation walks it meanwhile.
    if (folderFd_ >= 0 && parentFd_ >= 0)
        removeTreeAt(parentFd_, name_);
    if (folderFd_ >= 0)
        ::close(folderFd_);
    if (parentFd_ >= 0)
        ::close(parentFd_);
    folderFd_ = parentFd_ = -1;
}

ScratchTidy ScratchFolder::tidyWorkspaceRuns(std::uint64_t keptCacheBytes) const {
    ScratchTidy tidy;
    if (parentFd_ < 0)
        return tidy;
    std::vector<std::string> kept;
    for (const auto& name : namesIn(parentFd_)) {
        if (name == name_)
            continue;
        struct stat st {};
        if (::fstatat(parentFd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && isKeptScratchCache(name)) {
            kept.push_back(name);
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            addRemoval(tidy, name, removeTreeAt(parentFd_, name));
            continue;
        }
        // A folder: another evaluation's scratch folder while that evaluation holds it.
        const int held = lockedFolder(parentFd_, name);
        if (held < 0)
            continue;
        addRemoval(tidy, name, removeTreeAt(parentFd_, name));
        ::close(held);
    }

    std::uint64_t keptBytes = 0;
    bool measured = true;
    for (const auto& name : kept) {
        const TreeSweep size = measureTreeAt(parentFd_, name);
        keptBytes += size.bytes;
        measured = measured && size.complete;
    }
    if (keptBytes <= keptCacheBytes && measured)
        return tidy;
    // Over budget (or partly out of reach): emptied only while no other evaluation of this
    // workspace runs, since one may be reading a cache. Emptied, not removed: a warm worker's
    // standby child keeps `tmp` as its TMPDIR.
    if (::flock(parentFd_, LOCK_EX | LOCK_NB) == 0) {
        for (const auto& name : kept) {
            const int cache = ::openat(parentFd_, name.c_str(), kFolderFlags);
            if (cache < 0)
                continue;
            for (const auto& entry : namesIn(cache))
                addRemoval(tidy, name + "/" + entry, removeTreeAt(cache, entry));
            ::close(cache);
        }
        tidy.cachesCleared = true;
    }
    // Back to shared (a failed upgrade may have dropped the shared lock too).
    lockShared(parentFd_);
    return tidy;
}

ScratchTidy removeIdleWorkspaceRuns(const fs::path& runsRoot, std::chrono::seconds idleFor) {
    ScratchTidy tidy;
    const int root = ::open(runsRoot.c_str(), kFolderFlags);
    if (root < 0)
        return tidy;
    const std::time_t now = std::time(nullptr);
    for (const auto& name : namesIn(root)) {
        const bool leftover = name.rfind(".kwb-deep-", 0) == 0; // an interrupted removal's
        if (name.rfind("ws-", 0) != 0 && !leftover)
            continue;
        struct stat st {};
        if (::fstatat(root, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (!S_ISDIR(st.st_mode) || leftover) {
            addRemoval(tidy, name, removeTreeAt(root, name));
            continue;
        }
        // A folder's time changes whenever an evaluation adds or removes its scratch folder.
        if (now - st.st_mtime < idleFor.count())
            continue;
        const int held = lockedFolder(root, name);
        if (held < 0)
            continue; // an evaluation of that workspace runs
        addRemoval(tidy, name, removeTreeAt(root, name));
        ::close(held);
    }
    ::close(root);
    return tidy;
}

std::uint64_t keptScratchCacheBudget() {
    return environmentNumber("KWB_RUNS_CACHE_MIB", 1024) << 20;
}

std::chrono::seconds workspaceRunsIdleTime() {
    return std::chrono::hours(environmentNumber("KWB_RUNS_IDLE_HOURS", 72));
}

} // namespace kwb
