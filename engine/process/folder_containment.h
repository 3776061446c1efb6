#pragma once

#include <filesystem>

namespace kwb {

// `path` where it really is: symbolic links in the part that exists resolved, `.` and `..`
// folded; unchanged parts of a path that does not exist yet are kept.
std::filesystem::path resolvedPath(const std::filesystem::path& path);

// Whether `path` is `root` or lies below it, compared component by component as given (a
// sibling named like the root with a suffix is not below it); resolve both first where links
// matter.
bool isWithinFolder(const std::filesystem::path& path, const std::filesystem::path& root);

} // namespace kwb
