#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

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
// way is removed and replaced by a real folder; a link in the file's place is replaced by the
// file. False with the reason in `error` when the path is not contained or a write fails.
bool writeFileInside(const std::filesystem::path& root, std::string_view relative,
                     std::string_view bytes, std::string* error = nullptr);

// Removes the file (or the link in its place) without following links on the way. True when it
// is gone afterwards.
bool removeFileInside(const std::filesystem::path& root, std::string_view relative);

// Whether the entry at `relative` (its last component) is a regular file reached through real
// folders only.
bool isRegularFileInside(const std::filesystem::path& root, std::string_view relative);

} // namespace kwb
