#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb {

// Files inside a folder the candidate or the agent controls (a workspace), read and written by
// trusted code (the engine's protected-file restore, the episode runner's scans and forks)
// without ever following a link: a planted `utils -> /home/user` or `notes.txt -> ~/.ssh/id_rsa`
// must neither lead a write outside the folder nor bring a host file into a record.

// Why `relative` cannot name a file inside a workspace, or empty when it can: it must be
// relative, non-empty, without "." or ".." components, empty components, backslashes or NUL.
std::string containedPathProblem(std::string_view relative);

// The file's bytes, or nullopt when it is missing, is not a regular file, is larger than
// maxBytes, or any component of the path (the root excepted) is a link.
std::optional<std::string> readFileInside(const std::filesystem::path& root,
                                          std::string_view relative,
                                          std::size_t maxBytes = std::size_t(64) << 20);

// Writes the file, creating folders as needed. A link, or a file where a folder belongs, on the
// way is removed and replaced by a real folder. The bytes go to a fresh file (O_EXCL|O_NOFOLLOW)
// that is then renamed over the name: whatever stood there (a link, a hard link to a file
// elsewhere) is replaced, never written through, and a reader sees the old or the new file
// whole. The file gets `mode` (permission bits), or with -1 those of the regular file it
// replaces, else 0644. False with the reason in `error` when the path is not contained or a
// write fails.
bool writeFileInside(const std::filesystem::path& root, std::string_view relative,
                     std::string_view bytes, std::string* error = nullptr, int mode = -1);

// Makes the folder and its parents, replacing links and files on the way by real folders, as
// writeFileInside does; true when `root/relative` is then a real folder.
bool makeFolderInside(const std::filesystem::path& root, std::string_view relative,
                      std::string* error = nullptr);

// The names of the regular files (no links, folders or devices) directly in the folder, reached
// through real folders only; empty when it cannot be.
std::vector<std::string> regularFilesInside(const std::filesystem::path& root,
                                            std::string_view relative);

// `path` named for the functions here: relative to `root` when it lies inside it (so the links
// an agent left on the way are never followed), else relative to its own folder, whose path is
// kwb's or the user's and taken as it is.
struct AnchoredPath {
    std::filesystem::path root;
    std::string relative;
};
AnchoredPath anchoredPath(const std::filesystem::path& root, const std::filesystem::path& path);

// Removes the file (or the link in its place) without following links on the way. True when it
// is gone afterwards.
bool removeFileInside(const std::filesystem::path& root, std::string_view relative);

// Whether the entry at `relative` (its last component) is a regular file reached through real
// folders only.
bool isRegularFileInside(const std::filesystem::path& root, std::string_view relative);

} // namespace kwb
