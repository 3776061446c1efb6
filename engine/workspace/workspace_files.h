#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kwb {

// A workspace's editable text files: workspace-relative path -> contents. What an episode
// records as its start, what the hand-edit history keeps per evaluation, and what a step's
// files are rebuilt from.
using WorkspaceFiles = std::map<std::string, std::string>;

// Larger files are left out of records: sources are kilobytes, anything bigger is data.
constexpr std::uintmax_t kMaxRecordedFileBytes = 1 << 20;

// The workspace's files as they are now: regular UTF-8 files up to kMaxRecordedFileBytes,
// reached without following links, outside hidden, `__pycache__` and `build` folders, and
// never the protected files the engine restores.
WorkspaceFiles scanWorkspaceFiles(const std::string& workspace);

bool isValidUtf8(const std::string& text);

// One hunk between two texts of a file: the changed middle with the unchanged ends trimmed,
// headed like a unified diff (`/dev/null` for a side that does not exist).
struct FileTextDiff {
    std::string text;
    int added = 0;
    int removed = 0;
};
FileTextDiff diffFileTexts(const std::string& path, const std::optional<std::string>& before,
                           const std::optional<std::string>& after);

} // namespace kwb
