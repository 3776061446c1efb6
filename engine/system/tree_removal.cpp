#include "engine/system/tree_removal.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace kwb {
namespace {

// Descriptors held at once stay near this (one per level walked).
constexpr int kMaxDepth = 40;

constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// The counter behind uniqueLocalName.
std::atomic<unsigned long> localNameCount{0};

// The mount a descriptor lies on: st_dev alone would call a btrfs subvolume another file system
// and leave it behind for ever.
bool mountIdOf(int fd, std::uint64_t& id) {
    struct statx sx {};
    if (::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) != 0 ||
        !(sx.stx_mask & STATX_MNT_ID))
        return false;
    id = sx.stx_mnt_id;
    return true;
}

bool isDotOrDotDot(std::string_view name) {
    return name == "." || name == "..";
}

class TreeWalker {
public:
    TreeWalker(int rootFd, bool remove) : rootFd_(rootFd), remove_(remove) {
        struct stat st {};
        if (::fstat(rootFd, &st) == 0)
            device_ = st.st_dev;
        else
            sweep_.complete = false;
        hasMountId_ = mountIdOf(rootFd, mountId_);
    }

    TreeSweep walk(const std::string& name) {
        visit(rootFd_, name, 0);
        // Subtrees moved up beside the tree because they lay too deep: each is a tree of its
        // own now, walked from the top again.
        while (!deferred_.empty()) {
            const std::string next = deferred_.back();
            deferred_.pop_back();
            visit(rootFd_, next, 0);
        }
        return sweep_;
    }

private:
    void account(const struct stat& st) {
        sweep_.bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
        ++sweep_.entries;
    }

    // Counted once it is gone (a measurement counts what it saw).
    void unlinkEntry(int parentFd, const char* name, int flags, const struct stat& st) {
        if (::unlinkat(parentFd, name, flags) == 0)
            account(st);
        else if (errno != ENOENT)
            sweep_.complete = false;
    }

    // Whether an opened folder lies on the root's mount: another mount is not ours to walk.
    bool onRootMount(int fd, const struct stat& st) const {
        std::uint64_t id = 0;
        if (hasMountId_ && mountIdOf(fd, id))
            return id == mountId_;
        return st.st_dev == device_;
    }

    void visit(int parentFd, const std::string& name, int depth) {
        struct stat st {};
        if (::fstatat(parentFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT)
                sweep_.complete = false;
            return;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (remove_)
                unlinkEntry(parentFd, name.c_str(), 0, st);
            else
                account(st);
            return;
        }
        if (depth >= kMaxDepth) {
            moveUp(parentFd, name);
            return;
        }
        const int fd = remove_ ? openFolderRestoringAccess(parentFd, name.c_str())
                               : ::openat(parentFd, name.c_str(), kFolderFlags);
        if (fd < 0) {
            if (errno != ENOENT)
                sweep_.complete = false;
            return;
        }
        struct stat opened {};
        if (::fstat(fd, &opened) != 0 || opened.st_ino != st.st_ino || opened.st_dev != st.st_dev) {
            // Swapped between the look and the open: look again from the name.
            ::close(fd);
            visit(parentFd, name, depth + 1);
            return;
        }
        if (!onRootMount(fd, opened)) { // a mount point: not ours to walk
            ::close(fd);
            sweep_.complete = false;
            return;
        }
        if (remove_ && (opened.st_mode & S_IRWXU) != S_IRWXU)
            (void)!::fchmod(fd, S_IRWXU);
        // Names first, then the visits: removing while readdir runs may skip entries.
        for (const auto& child : folderEntries(fd))
            visit(fd, child, depth + 1);
        ::close(fd);
        if (remove_)
            unlinkEntry(parentFd, name.c_str(), AT_REMOVEDIR, st);
        else
            account(st);
    }

    // A folder this deep is renamed into the root's folder (same file system, so a rename) and
    // walked from there later; a measurement cannot move anything and counts it as unreached.
    void moveUp(int parentFd, const std::string& name) {
        if (!remove_) {
            sweep_.complete = false;
            return;
        }
        if (auto moved = renameAside(parentFd, name, rootFd_, ".kwb-deep-")) {
            deferred_.push_back(*moved);
            return;
        }
        sweep_.complete = false;
    }

    int rootFd_;
    bool remove_;
    dev_t device_ = 0;
    TreeSweep sweep_;
    std::vector<std::string> deferred_;
    std::uint64_t mountId_ = 0;
    bool hasMountId_ = false;
};

} // namespace

int openFolderRestoringAccess(int parentFd, const char* name) {
    const int fd = ::openat(parentFd, name, kFolderFlags);
    if (fd >= 0 || errno != EACCES)
        return fd;
    const int handle = ::openat(parentFd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (handle < 0) {
        errno = EACCES;
        return -1;
    }
    const std::string viaProc = "/proc/self/fd/" + std::to_string(handle);
    const bool restored = ::chmod(viaProc.c_str(), S_IRWXU) == 0;
    ::close(handle);
    if (!restored) {
        errno = EACCES;
        return -1;
    }
    return ::openat(parentFd, name, kFolderFlags);
}

std::vector<std::string> folderEntries(int fd) {
    std::vector<std::string> names;
    const int copy = ::dup(fd); // fdopendir takes the descriptor it is given
    if (copy < 0)
        return names;
    DIR* folder = ::fdopendir(copy);
    if (!folder) {
        ::close(copy);
        return names;
    }
    ::rewinddir(folder); // the copy shares the original's position
    while (const dirent* entry = ::readdir(folder))
        if (!isDotOrDotDot(entry->d_name))
            names.emplace_back(entry->d_name);
    ::closedir(folder);
    return names;
}

std::string uniqueLocalName(std::string_view prefix) {
    return std::string(prefix) + std::to_string(::getpid()) + "-" +
           std::to_string(localNameCount++);
}

std::optional<std::string> renameAside(int fromFd, const std::string& name, int toFd,
                                       std::string_view prefix) {
    for (int attempt = 0; attempt < 4; ++attempt) {
        std::string aside = uniqueLocalName(prefix);
        if (renameWithoutReplacing(fromFd, name.c_str(), toFd, aside.c_str()))
            return aside;
        if (errno != EEXIST)
            break; // EEXIST: a name another process drew (pids of other namespaces)
    }
    return std::nullopt;
}

bool renameWithoutReplacing(int fromFd, const char* from, int toFd, const char* to) {
    if (::renameat2(fromFd, from, toFd, to, RENAME_NOREPLACE) == 0)
        return true;
    if (errno != EINVAL && errno != ENOSYS)
        return false;
    struct stat st {};
    if (::fstatat(toFd, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        errno = EEXIST;
        return false;
    }
    return ::renameat(fromFd, from, toFd, to) == 0;
}

TreeSweep removeTreeAt(int parentFd, const std::string& name) {
    return TreeWalker(parentFd, true).walk(name);
}

TreeSweep measureTreeAt(int parentFd, const std::string& name) {
    return TreeWalker(parentFd, false).walk(name);
}

TreeSweep removeTree(const std::filesystem::path& path) {
    std::filesystem::path normal = path.lexically_normal();
    if (!normal.has_filename()) // "folder/" names the folder
        normal = normal.parent_path();
    std::filesystem::path parent = normal.parent_path();
    if (parent.empty())
        parent = ".";
    const std::string name = normal.filename().string();
    if (name.empty() || isDotOrDotDot(name))
        return TreeSweep{0, 0, false};
    const int parentFd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (parentFd < 0)
        return TreeSweep{0, 0, errno == ENOENT};
    TreeSweep sweep = removeTreeAt(parentFd, name);
    ::close(parentFd);
    return sweep;
}

} // namespace kwb
