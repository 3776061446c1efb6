#include "engine/workspace/scratch_folders.h"

#include "engine/system/content_hash.h"
#include "engine/system/tree_removal.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utility>

namespace fs = std::filesystem;

namespace kwb {
namespace {

constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// How long a claim waits for a lock another process holds exclusively. kwb holds one only while
// it renames a tidy's entries aside; a holder past this is no evaluation (a leftover process of
// a candidate's), and the evaluation says so instead of waiting for ever.
constexpr std::chrono::seconds kLockPatience{60};

bool sameFile(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The folder `name` inside `parentFd`, opened and locked exclusively without waiting; -1 with
// errno EWOULDBLOCK when someone holds it, another errno when it cannot be opened.
int lockedFolder(int parentFd, const std::string& name) {
    const int fd = openFolderRestoringAccess(parentFd, name.c_str());
    if (fd < 0)
        return -1;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int why = errno;
        ::close(fd);
        errno = why;
        return -1;
    }
    return fd;
}

bool waitForLock(int fd, int operation, std::chrono::seconds patience) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (true) {
        if (::flock(fd, operation | LOCK_NB) == 0)
            return true;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return false;
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

void addRemoval(ScratchTidy& tidy, const std::string& name, const TreeSweep& sweep) {
    tidy.removed.push_back(name);
    tidy.bytesFreed += sweep.bytes;
    tidy.complete = tidy.complete && sweep.complete;
}

// An entry renamed aside, to be removed once the runs folder is shared again.
struct Trash {
    std::string name;     // its name now
    std::string original; // the name it had, for the report
};

// Renames `name` aside (fast, whatever it holds); false when it cannot be.
bool moveToTrash(int fd, const std::string& name, std::vector<Trash>& trash) {
    std::optional<std::string> aside = renameAside(fd, name, fd, ".kwb-trash-");
    if (aside)
        trash.push_back({*aside, name});
    return aside.has_value();
}

// The runs folder with no evaluation in it (held exclusively): every entry but the kept caches
// is renamed aside, and the kept caches too when over budget (each then made again, empty).
// Renames only: the removal itself happens after the lock is shared again, so that no other
// evaluation waits for it.
void setAsideUnheld(int fd, const ScratchCacheBudget& budget, ScratchTidy& tidy,
                    std::vector<Trash>& trash) {
    std::vector<std::string> kept;
    for (const auto& name : folderEntries(fd)) {
        struct stat st {};
        if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && isKeptScratchCache(name)) {
            kept.push_back(name);
            continue;
        }
        if (!moveToTrash(fd, name, trash))
            addRemoval(tidy, name, removeTreeAt(fd, name));
    }
    std::uint64_t bytes = 0, entries = 0;
    bool measured = true;
    for (const auto& name : kept) {
        const TreeSweep size = measureTreeAt(fd, name);
        bytes += size.bytes;
        entries += size.entries;
        measured = measured && size.complete;
    }
    if (bytes <= budget.bytes && entries <= budget.entries && measured)
        return;
    for (const auto& name : kept) {
        if (!moveToTrash(fd, name, trash)) {
            tidy.complete = false;
            continue;
        }
        // Made again at once: a warm worker's standby child keeps `tmp` as its TMPDIR.
        ::mkdirat(fd, name.c_str(), name == "tmp" ? S_IRWXU : 0755);
    }
    tidy.cachesCleared = true;
}

// The runs folder shared with other evaluations, whose stages may use anything in it: only
// the scratch folders of evaluations that ended go.
void removeEndedScratchFolders(int fd, ScratchTidy& tidy) {
    for (const auto& name : folderEntries(fd)) {
        if (!isScratchFolderName(name))
            continue;
        const int held = lockedFolder(fd, name);
        if (held < 0) {
            if (errno != EWOULDBLOCK && errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
                tidy.complete = false;
            continue;
        }
        addRemoval(tidy, name, removeTreeAt(fd, name));
        ::close(held);
    }
}

void removeTrash(int fd, const std::vector<Trash>& trash, ScratchTidy& tidy) {
    for (const auto& t : trash)
        addRemoval(tidy, t.original, removeTreeAt(fd, t.name));
}

// Whether the folder open as `fd` is still the one at `path` (a sweep may have removed it while
// the claim waited for its lock).
bool stillNamed(int fd, const fs::path& path) {
    struct stat opened {
    }, named{};
    return ::fstat(fd, &opened) == 0 && ::lstat(path.c_str(), &named) == 0 &&
           sameFile(opened, named);
}

std::uint64_t environmentNumber(const char* name, std::uint64_t fallback, std::uint64_t most) {
    const char* text = std::getenv(name);
    if (!text || !*text)
        return fallback;
    const std::string_view digits = text;
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error == std::errc::result_out_of_range)
        return most;
    if (error != std::errc() || end != digits.data() + digits.size())
        return fallback;
    return std::min(value, most);
}

} // namespace

fs::path workspaceRunsFolder(const fs::path& cacheDirectory, const std::string& workspace,
                             const std::string& candidatePath) {
    return cacheDirectory / "runs" /
           ("ws-" + sha256Hex(workspace + "\n" + candidatePath).substr(0, 16));
}

std::string newScratchFolderName() {
    static thread_local std::mt19937_64 random{std::random_device{}()};
    return std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "-" +
           std::to_string(random() >> 1);
}

bool isScratchFolderName(std::string_view name) {
    // <digits>-<digits>, and a claim's "-<attempt>" when the first name was taken.
    int groups = 0;
    std::size_t i = 0;
    while (i < name.size()) {
        const std::size_t start = i;
        while (i < name.size() && name[i] >= '0' && name[i] <= '9')
            ++i;
        if (i == start)
            return false;
        ++groups;
        if (i == name.size())
            break;
        if (name[i] != '-')
            return false;
        ++i;
        if (i == name.size())
            return false;
    }
    return groups == 2 || groups == 3;
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
                                                  const std::string& runId,
                                                  const ScratchCacheBudget& budget,
                                                  ScratchTidy* tidyOut, std::string* error) {
    auto failWith = [&](const std::string& why) -> std::optional<ScratchFolder> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    // A sweep of another process may remove the runs folder between two steps; a few rounds end
    // every such race (each round starts from the path again).
    for (int attempt = 0; attempt < 8; ++attempt) {
        std::error_code ec;
        fs::create_directories(workspaceRuns, ec);
        ScratchFolder folder;
        folder.parentFd_ = openFolderRestoringAccess(AT_FDCWD, workspaceRuns.c_str());
        if (folder.parentFd_ < 0) {
            if (errno == ENOENT)
                continue;
            return failWith("cannot open " + workspaceRuns.string() + ": " + std::strerror(errno));
        }
        ScratchTidy tidy;
        tidy.alone = ::flock(folder.parentFd_, LOCK_EX | LOCK_NB) == 0;
        // A file system without flock (ENOLCK, EOPNOTSUPP: some network mounts) says nothing of
        // who else is here: the folder is used without locks and without a tidy.
        const bool locking = tidy.alone || errno == EWOULDBLOCK || errno == EINTR;
        if (!tidy.alone && locking && !waitForLock(folder.parentFd_, LOCK_SH, kLockPatience))
            return failWith(workspaceRuns.string() + " stayed locked by another process for " +
                            std::to_string(kLockPatience.count()) + " s");
        if (!stillNamed(folder.parentFd_, workspaceRuns))
            continue;
        std::vector<Trash> trash;
        if (tidy.alone)
            setAsideUnheld(folder.parentFd_, budget, tidy, trash);
        else if (locking)
            removeEndedScratchFolders(folder.parentFd_, tidy);

        // Made and locked under a name no tidy takes for a scratch folder, then renamed: a
        // tidy of another evaluation never finds it unlocked.
        const std::string making = uniqueLocalName(".kwb-new-");
        int made = ::mkdirat(folder.parentFd_, making.c_str(), 0755);
        if (made != 0 && errno == EACCES && ::fchmod(folder.parentFd_, S_IRWXU) == 0)
            made = ::mkdirat(folder.parentFd_, making.c_str(), 0755); // `chmod 500 $HOME`
        if (made != 0)
            return failWith("cannot create a scratch folder in " + workspaceRuns.string() + ": " +
                            std::strerror(errno));
        folder.folderFd_ = locking ? lockedFolder(folder.parentFd_, making)
                                   : openFolderRestoringAccess(folder.parentFd_, making.c_str());
        if (folder.folderFd_ < 0)
            return failWith("cannot lock a new scratch folder in " + workspaceRuns.string() + ": " +
                            std::strerror(errno));
        folder.name_ = runId;
        for (int n = 1; !renameWithoutReplacing(folder.parentFd_, making.c_str(), folder.parentFd_,
                                                folder.name_.c_str());
             ++n) {
            if (errno != EEXIST || n > 8) {
                removeTreeAt(folder.parentFd_, making);
                return failWith("cannot name the scratch folder " +
                                (workspaceRuns / runId).string() + ": " + std::strerror(errno));
            }
            folder.name_ = runId + "-" + std::to_string(n);
        }
        if (tidy.alone && !waitForLock(folder.parentFd_, LOCK_SH, kLockPatience))
            return failWith("cannot share the lock on " + workspaceRuns.string() + " again");
        removeTrash(folder.parentFd_, trash, tidy);
        folder.path_ = (workspaceRuns / folder.name_).string();
        if (tidyOut)
            *tidyOut = std::move(tidy);
        return folder;
    }
    return failWith("cannot claim a scratch folder in " + workspaceRuns.string() +
                    ": it kept being removed");
}

ScratchFolder::ScratchFolder(ScratchFolder&& other) noexcept
    : parentFd_(std::exchange(other.parentFd_, -1)), folderFd_(std::exchange(other.folderFd_, -1)),
      name_(std::move(other.name_)), path_(std::exchange(other.path_, std::string())) {}

ScratchFolder& ScratchFolder::operator=(ScratchFolder&& other) noexcept {
    if (this != &other) {
        release();
        parentFd_ = std::exchange(other.parentFd_, -1);
        folderFd_ = std::exchange(other.folderFd_, -1);
        name_ = std::move(other.name_);
        path_ = std::exchange(other.path_, std::string());
    }
    return *this;
}

ScratchFolder::~ScratchFolder() {
    release();
}

void ScratchFolder::release() {
    // Removed while still locked, and only while the name is still the folder this evaluation
    // made (it lies in a folder candidates write).
    if (folderFd_ >= 0 && parentFd_ >= 0) {
        struct stat mine {
        }, listed{};
        if (::fstat(folderFd_, &mine) == 0 &&
            ::fstatat(parentFd_, name_.c_str(), &listed, AT_SYMLINK_NOFOLLOW) == 0 &&
            sameFile(mine, listed))
            removeTreeAt(parentFd_, name_);
    }
    if (folderFd_ >= 0)
        ::close(folderFd_);
    if (parentFd_ >= 0)
        ::close(parentFd_);
    folderFd_ = parentFd_ = -1;
}

ScratchTidy removeIdleWorkspaceRuns(const fs::path& runsRoot, std::chrono::seconds idleFor) {
    ScratchTidy tidy;
    const int root = ::open(runsRoot.c_str(), kFolderFlags);
    if (root < 0)
        return tidy;
    // The fine clock: time() reads the kernel's coarse one, up to a tick behind a change time
    // the file system took from the fine clock, so a folder changed in the last instant of a
    // second could look changed in the next one, and younger than any idle time (0 included).
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    for (const auto& name : folderEntries(root)) {
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
        // The change time moves whenever an evaluation adds or removes its scratch folder, and
        // unlike the modification time no process can set it back.
        if (now - st.st_ctime < idleFor.count())
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

ScratchCacheBudget keptScratchCacheBudget() {
    ScratchCacheBudget budget;
    budget.bytes = environmentNumber("KWB_RUNS_CACHE_MIB", 1024, 1ULL << 24) << 20;
    return budget;
}

std::chrono::seconds workspaceRunsIdleTime() {
    return std::chrono::hours(environmentNumber("KWB_RUNS_IDLE_HOURS", 72, 24 * 365 * 10));
}

} // namespace kwb
