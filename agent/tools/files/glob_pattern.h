#pragma once

#include <regex>
#include <string>
#include <string_view>

namespace kwb::agent {

// A glob as models write them ("**/*.cu", "kernels/*.{cu,cpp}", "model_new.py"), matched against
// '/'-separated workspace-relative paths: '*' and '?' stay within one folder, "**" spans folders,
// {a,b} picks one of several, [...] is a character class ([!...] negated).
class GlobPattern {
public:
    // `anyFolderWithoutSlash`: a pattern without '/' matches the file name in any folder, as
    // grep's --include and ripgrep's --glob do ("*.cu" finds kernels/a.cu).
    explicit GlobPattern(std::string_view pattern, bool anyFolderWithoutSlash = false);

    bool valid() const { return error_.empty(); }
    const std::string& error() const { return error_; }
    bool matches(std::string_view relativePath) const;

private:
    std::regex regex_;
    std::string error_;
};

} // namespace kwb::agent
