#pragma once

#include <bitset>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::agent {

// A glob as models write them ("**/*.cu", "kernels/*.{cu,cpp}", "model_new.py"), matched against
// '/'-separated workspace-relative paths: '*' and '?' stay within one folder, "**" spans folders,
// {a,b} picks one of several, [...] is a character class ([!...] negated).
//
// The pattern comes from the model, so it is compiled into a small automaton and matched by
// stepping every live state over the path at once: time is bounded by pattern length times path
// length and nothing recurses. (std::regex recursed once per pattern character, overflowing the
// stack on a 200 kB pattern, and backtracked exponentially on "*a*a*a...*b".)
class GlobPattern {
public:
    // Longer patterns are refused with an error: no real glob comes near it, and the bound keeps
    // matching every file of a large workspace cheap.
    static constexpr std::size_t kMaxPatternChars = 4096;

    // `anyFolderWithoutSlash`: a pattern without '/' matches the file name in any folder, as
    // grep's --include and ripgrep's --glob do ("*.cu" finds kernels/a.cu).
    explicit GlobPattern(std::string_view pattern, bool anyFolderWithoutSlash = false);

    bool valid() const { return error_.empty(); }
    const std::string& error() const { return error_; }
    bool matches(std::string_view relativePath) const;

    struct Step {
        enum class Kind {
            Literal,    // one given character
            AnyOne,     // '?': one character other than '/'
            Class,      // [...]: one character (never '/') in or, negated, not in `members`
            Star,       // '*': any run of characters other than '/'
            AnyRun,     // "**" inside a name: any run of characters, '/' included
            FolderLoop, // "**/": any run of characters that ends with '/' (then goes on)
            Fork,       // '{': goes on at each of `targets` without reading a character
            Jump,       // ',' or '}': goes on at `targets[0]` without reading a character
            Accept,     // the end of the pattern
        };
        Kind kind = Kind::Literal;
        char literal = 0;
        bool negated = false;
        std::bitset<256> members;         // Class: the member characters, ranges expanded
        std::vector<std::size_t> targets; // Fork, Jump
    };

private:
    std::vector<Step> steps_;
    std::string error_;
};

} // namespace kwb::agent
