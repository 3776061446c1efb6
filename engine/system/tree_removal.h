#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb {

// What a removal or a measurement of a folder tree met.
struct TreeSweep {
    std::uint64_t bytes = 0; // disk blocks of what was removed (or measured), in bytes
    std::size_t entries = 0; // files, links and folders
    bool complete = true;    // false: something stayed (or was out of reach of a measurement)
};

// Removes `name` inside the folder open as `parentFd`, whatever it is: a file, a link, a tree.
// Written for trees an untrusted process wrote (a candidate's scratch folders): a link is
// removed, never followed; nothing on another file system is entered; a folder swapped for a
// link while the removal runs is seen by its descriptor, not its name. Any depth, with a few
// dozen descriptors open: subtrees too deep to walk in place are moved up beside `name` first.
// std::filesystem::remove_all walks by path names, which such a swap can redirect.
TreeSweep removeTreeAt(int parentFd, const std::string& name);

// renameat2(..., RENAME_NOREPLACE), and where the file system does not offer it (NFS, older
// kernels: EINVAL, ENOSYS) a look for `to` and a plain rename: false with errno EEXIST when
// `to` exists. Names kwb draws itself are unique enough for the look's race not to matter.
bool renameWithoutReplacing(int fromFd, const char* from, int toFd, const char* to);

// Opens the folder `name` inside `parentFd` for reading, never through a link. When its owner
// (us: the tree's writer runs as our user) took the rights away (`chmod 000`), they are given
// back first, through a handle to what was found, not by name. -1 with errno set otherwise.
int openFolderRestoringAccess(int parentFd, const char* name);

// The names in the folder open as `fd` ("." and ".." left out); `fd` stays open and usable.
std::vector<std::string> folderEntries(int fd);

// Renames `name` in `fromFd` to <prefix><pid>-<n> in `toFd`, a name no other walker or claim of
// this process draws; the new name, or nullopt (errno set) when it cannot be renamed.
std::optional<std::string> renameAside(int fromFd, const std::string& name, int toFd,
                                       std::string_view prefix);

// <prefix><pid>-<n>: a name unique among those this process draws.
std::string uniqueLocalName(std::string_view prefix);

// removeTreeAt for a path. The parent is opened by its path, following links on the way there:
// for paths kwb chose, not for a name inside a tree an untrusted process writes.
TreeSweep removeTree(const std::filesystem::path& path);

// The disk space of `name` inside `parentFd`, walked as removeTreeAt walks it. `complete` is
// false when part of the tree was out of reach (too deep, unreadable, another file system).
TreeSweep measureTreeAt(int parentFd, const std::string& name);

} // namespace kwb
