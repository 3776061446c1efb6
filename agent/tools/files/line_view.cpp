#include "agent/tools/files/line_view.h"

#include <algorithm>
#include <cstdio>

namespace kwb::agent {

std::vector<std::string_view> splitLines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        lines.push_back(line);
        start = end + 1;
    }
    return lines;
}

std::size_t lineNumberAt(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
}

std::string numberedLines(const std::vector<std::string_view>& lines, std::size_t firstLine,
                          std::size_t count, std::size_t maxLineChars) {
    std::string out;
    const std::size_t begin = firstLine == 0 ? 0 : firstLine - 1;
    const std::size_t end = std::min(lines.size(), begin + count);
    for (std::size_t i = begin; i < end; ++i) {
        char number[32];
        std::snprintf(number, sizeof number, "%6zu\t", i + 1);
        out += number;
        if (lines[i].size() > maxLineChars) {
            out.append(lines[i].substr(0, maxLineChars));
            out += " [... line cut: " + std::to_string(lines[i].size()) + " characters]";
        } else {
            out.append(lines[i]);
        }
        out += '\n';
    }
    return out;
}

} // namespace kwb::agent
