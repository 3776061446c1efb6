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

// Names for subtrees moved up, unique across the walkers of this process.
std::atomic<unsigned long> movedCount{0};

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

    // Opens a folder of the tree for reading, making it readable and writable first when its
    // owner (the tree's writer, which is us) took that away. The mode is changed through the
    // descriptor of what was opened without following a link, never by name.
    int openFolder(int parentFd, const char* name) {
        int fd = ::openat(parentFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 || errno != EACCES || !remove_)
            return fd;
        const int handle = ::openat(parentFd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (handle < 0)
            return -1;
        const std::string viaProc = "/proc/self/fd/" + std::to_string(handle);
        const bool changed = ::chmod(viaProc.c_str(), S_IRWXU) == 0;
        ::close(handle);
        if (!changed)
            return -1;
        return ::openat(parentFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
        const int fd = openFolder(parentFd, name.c_str());
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
        DIR* folder = ::fdopendir(fd);
        if (!folder) {
            ::close(fd);
            sweep_.complete = false;
            return;
        }
        // Names first, then the visits: removing while readdir runs may skip entries.
        std::vector<std::string> children;
        while (const dirent* entry = ::readdir(folder))
            if (!isDotOrDotDot(entry->d_name))
                children.emplace_back(entry->d_name);
        for (const auto& child : children)
            visit(::dirfd(folder), child, depth + 1);
        ::closedir(folder);
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
        for (int attempt = 0; attempt < 4; ++attempt) {
            const std::string moved =
                ".kwb-deep-" + std::to_string(::getpid()) + "-" + std::to_string(movedCount++);
            if (renameWithoutReplacing(parentFd, name.c_str(), rootFd_, moved.c_str())) {
                deferred_.push_back(moved);
                return;
            }
            if (errno != EEXIST)
                break;
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
