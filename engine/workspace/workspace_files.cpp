#include "engine/workspace/workspace_files.h"

#include "engine/workspace/contained_files.h"
#include "engine/workspace/workspace.h"

#include <filesystem>
#include <sstream>
#include <vector>

namespace kwb {
namespace {

namespace fs = std::filesystem;

bool skippedFolder(const std::string& name) {
    return name.empty() || name[0] == '.' || name == "__pycache__" || name == "build";
}

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

} // namespace

bool isValidUtf8(const std::string& text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        int extra = c < 0x80           ? 0
                    : (c >> 5) == 0x6  ? 1
                    : (c >> 4) == 0xE  ? 2
                    : (c >> 3) == 0x1E ? 3
                                       : -1;
        if (extra < 0 || c == 0 || i + extra >= text.size())
            return false;
        for (int k = 1; k <= extra; ++k)
            if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2)
                return false;
        i += extra + 1;
    }
    return true;
}

WorkspaceFiles scanWorkspaceFiles(const std::string& workspace) {
    WorkspaceFiles files;
    std::error_code ec;
    const fs::path root(workspace);
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (it->is_directory(ec)) {
            if (skippedFolder(name))
                it.disable_recursion_pending();
            continue;
        }
        // Links are never followed: a link to a host file must not bring its contents into the
        // store, an export or a fork's workspace.
        if (it->symlink_status(ec).type() != fs::file_type::regular || name.empty() ||
            name[0] == '.')
            continue;
        const std::string relative = it->path().lexically_relative(root).generic_string();
        if (isProtectedWorkspacePath(relative))
            continue;
        if (auto text = readFileInside(root, relative, kMaxRecordedFileBytes);
            text && isValidUtf8(*text))
            files[relative] = std::move(*text);
    }
    return files;
}

FileTextDiff diffFileTexts(const std::string& path, const std::optional<std::string>& before,
                           const std::optional<std::string>& after) {
    const auto a = splitLines(before.value_or(""));
    const auto b = splitLines(after.value_or(""));
    std::size_t prefix = 0;
    while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix])
        ++prefix;
    std::size_t suffix = 0;
    while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
           a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
        ++suffix;
    FileTextDiff diff;
    diff.removed = static_cast<int>(a.size() - prefix - suffix);
    diff.added = static_cast<int>(b.size() - prefix - suffix);
    std::ostringstream out;
    out << "--- " << (before ? "a/" + path : "/dev/null") << "\n+++ "
        << (after ? "b/" + path : "/dev/null") << "\n@@ -" << prefix + 1 << "," << diff.removed
        << " +" << prefix + 1 << "," << diff.added << " @@\n";
    for (std::size_t i = prefix; i < a.size() - suffix; ++i)
        out << "-" << a[i] << "\n";
    for (std::size_t i = prefix; i < b.size() - suffix; ++i)
        out << "+" << b[i] << "\n";
    diff.text = out.str();
    return diff;
}

} // namespace kwb
