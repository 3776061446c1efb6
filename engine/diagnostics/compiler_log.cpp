#include "engine/diagnostics/compiler_log.h"

#include <algorithm>
#include <regex>
#include <sstream>

namespace kwb::diagnostics {
namespace {

Severity severityFromWord(const std::string& word) {
    if (word == "warning")
        return Severity::Warning;
    if (word == "remark" || word == "note")
        return Severity::Note;
    return Severity::Error; // error, fatal error, catastrophic error
}

// EDG echoes the offending source line indented by two spaces, then a line with spaces (and the
// source's own tabs) up to a '^'. The caret's offset in that line, minus the indent, is the
// 0-based column in characters of the echoed line.
int columnFromCaret(const std::vector<std::string>& lines, std::size_t messageIndex) {
    if (messageIndex + 2 >= lines.size())
        return 0;
    const std::string& caretLine = lines[messageIndex + 2];
    const std::size_t caret = caretLine.find('^');
    if (caret == std::string::npos || caret < 2 || caretLine.find_first_not_of(" \t") != caret)
        return 0;
    if (lines[messageIndex + 1].rfind("  ", 0) != 0)
        return 0;
    return static_cast<int>(caret - 2) + 1;
}

} // namespace

std::vector<Diagnostic> parseCompilerLog(const std::string& log) {
    static const std::regex frontEnd(
        R"(^(.*?)\((\d+)\): (catastrophic error|error|warning|remark|note)(?: #[0-9A-Za-z-]+)?: (.*)$)");
    static const std::regex hostCompiler(
        R"(^(.*?):(\d+):(\d+): (fatal error|error|warning|note): (.*)$)");
    static const std::regex tool(R"(^(ptxas|nvcc|nvlink) +(warning|error|fatal) *: (.*)$)");

    std::vector<std::string> lines;
    {
        std::istringstream stream(log);
        std::string line;
        while (std::getline(stream, line)) {
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            // NVRTC's log can hold a NUL between its own text and ptxas's messages.
            line.erase(std::remove(line.begin(), line.end(), '\0'), line.end());
            lines.push_back(std::move(line));
        }
    }
    std::vector<Diagnostic> diagnostics;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        std::smatch match;
        Diagnostic d;
        if (std::regex_match(line, match, frontEnd)) {
            d.file = match[1];
            d.line = std::stoi(match[2]);
            d.column = columnFromCaret(lines, i);
            d.severity = severityFromWord(match[3]);
            d.message = match[4];
        } else if (std::regex_match(line, match, hostCompiler)) {
            d.file = match[1];
            d.line = std::stoi(match[2]);
            d.column = std::stoi(match[3]);
            d.severity = severityFromWord(match[4]);
            d.message = match[5];
        } else if (std::regex_match(line, match, tool)) {
            const std::string word = match[2];
            d.severity = word == "warning" ? Severity::Warning : Severity::Error;
            d.message = std::string(match[1]) + ": " + std::string(match[3]);
        } else {
            continue;
        }
        diagnostics.push_back(std::move(d));
    }
    return diagnostics;
}

void renameDiagnosticFile(std::vector<Diagnostic>& diagnostics, const std::string& from,
                          const std::string& to) {
    for (Diagnostic& d : diagnostics)
        if (d.file == from)
            d.file = to;
}

} // namespace kwb::diagnostics
