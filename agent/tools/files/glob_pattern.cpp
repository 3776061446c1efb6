#include "agent/tools/files/glob_pattern.h"

namespace kwb::agent {
namespace {

std::string globToRegex(std::string_view glob, std::string& error) {
    std::string out;
    int braces = 0;
    for (std::size_t i = 0; i < glob.size(); ++i) {
        const char c = glob[i];
        if (c == '*') {
            if (i + 1 < glob.size() && glob[i + 1] == '*') {
                const bool wholeFolder = (i == 0 || glob[i - 1] == '/');
                i += 1;
                if (wholeFolder && i + 1 < glob.size() && glob[i + 1] == '/') {
                    out += "(?:.*/)?";
                    i += 1;
                } else {
                    out += ".*";
                }
            } else {
                out += "[^/]*";
            }
        } else if (c == '?') {
            out += "[^/]";
        } else if (c == '[') {
            const std::size_t close = glob.find(']', i + 2);
            if (close == std::string_view::npos) {
                out += "\\[";
                continue;
            }
            std::string set(glob.substr(i + 1, close - i - 1));
            if (!set.empty() && set[0] == '!')
                set[0] = '^';
            out += "[" + set + "]";
            i = close;
        } else if (c == '{') {
            ++braces;
            out += "(?:";
        } else if (c == '}' && braces > 0) {
            --braces;
            out += ")";
        } else if (c == ',' && braces > 0) {
            out += "|";
        } else if (std::string_view("\\^$.|+()[]{}").find(c) != std::string_view::npos) {
            out += '\\';
            out += c;
        } else {
            out += c;
        }
    }
    if (braces > 0)
        error = "unbalanced '{' in the pattern";
    return out;
}

} // namespace

GlobPattern::GlobPattern(std::string_view pattern, bool anyFolderWithoutSlash) {
    while (pattern.rfind("./", 0) == 0)
        pattern.remove_prefix(2);
    std::string expression = globToRegex(pattern, error_);
    if (anyFolderWithoutSlash && pattern.find('/') == std::string_view::npos)
        expression = "(?:.*/)?" + expression;
    if (!error_.empty())
        return;
    try {
        regex_ = std::regex(expression, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        error_ = std::string("invalid glob pattern: ") + e.what();
    }
}

bool GlobPattern::matches(std::string_view relativePath) const {
    return valid() && std::regex_match(relativePath.begin(), relativePath.end(), regex_);
}

} // namespace kwb::agent
