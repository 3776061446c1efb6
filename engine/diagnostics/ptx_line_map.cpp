#include "engine/diagnostics/ptx_line_map.h"

#include <charconv>
#include <sstream>

namespace kwb::diagnostics {
namespace {

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// Reads a non-negative integer at the front of `s` (after blanks) and moves past it.
std::optional<int> takeNumber(std::string_view& s) {
    s = trimmed(s);
    int value = 0;
    const auto [end, problem] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (problem != std::errc() || value < 0)
        return std::nullopt;
    s.remove_prefix(std::size_t(end - s.data()));
    return value;
}

bool startsWithDirective(std::string_view line, std::string_view directive) {
    return line.substr(0, directive.size()) == directive &&
           (line.size() == directive.size() || line[directive.size()] == ' ' ||
            line[directive.size()] == '\t');
}

std::string fileNameOf(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

PtxLineMap PtxLineMap::fromPtx(const std::string& ptx) {
    PtxLineMap map;
    std::istringstream in(ptx);
    Entry current;
    int depth = 0; // braces: a `.loc` holds only inside the function it is in
    for (std::string text; std::getline(in, text);) {
        const std::string_view line = trimmed(text);
        if (startsWithDirective(line, ".loc")) {
            std::string_view rest = line.substr(4);
            const auto file = takeNumber(rest);
            const auto sourceLine = takeNumber(rest);
            current = file && sourceLine ? Entry{*file, *sourceLine} : Entry{};
            map.byPtxLine_.push_back(current);
            continue;
        }
        if (startsWithDirective(line, ".file")) {
            std::string_view rest = line.substr(5);
            const auto index = takeNumber(rest);
            rest = trimmed(rest);
            const std::size_t open = rest.find('"');
            const std::size_t close =
                open == std::string_view::npos ? open : rest.find('"', open + 1);
            if (index && close != std::string_view::npos)
                map.files_.emplace_back(*index,
                                        std::string(rest.substr(open + 1, close - open - 1)));
            map.byPtxLine_.push_back({});
            continue;
        }
        for (const char c : line) {
            if (c == '{')
                ++depth;
            else if (c == '}' && depth > 0 && --depth == 0)
                current = {}; // the function ended; what follows is module scope
        }
        map.byPtxLine_.push_back(depth > 0 ? current : Entry{});
    }
    return map;
}

std::optional<SourcePlace> PtxLineMap::sourceOf(int ptxLine) const {
    if (ptxLine < 1 || ptxLine > int(byPtxLine_.size()))
        return std::nullopt;
    const Entry& e = byPtxLine_[std::size_t(ptxLine - 1)];
    if (e.fileIndex == 0 || e.line == 0)
        return std::nullopt;
    for (const auto& [index, name] : files_)
        if (index == e.fileIndex)
            return SourcePlace{name, e.line};
    return std::nullopt;
}

bool PtxLineMap::fileMatches(int fileIndex, const std::string& file) const {
    for (const auto& [index, name] : files_)
        if (index == fileIndex)
            return name == file || fileNameOf(name) == fileNameOf(file);
    return false;
}

std::vector<int> PtxLineMap::ptxLinesOf(const std::string& file, int line) const {
    std::vector<int> lines;
    for (std::size_t i = 0; i < byPtxLine_.size(); ++i) {
        const Entry& e = byPtxLine_[i];
        if (e.line == line && e.fileIndex != 0 && fileMatches(e.fileIndex, file))
            lines.push_back(int(i) + 1);
    }
    return lines;
}

std::vector<std::string> PtxLineMap::files() const {
    std::vector<std::string> names;
    for (const auto& [index, name] : files_)
        names.push_back(name);
    return names;
}

} // namespace kwb::diagnostics
