#include "engine/diagnostics/include_guard.h"

#include "engine/process/folder_containment.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <vector>

namespace kwb::diagnostics {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = 16;
constexpr std::uintmax_t kMaxHeaderBytes = 4 << 20;

// The text with comments blanked (newlines kept, so line numbers hold); strings are kept.
std::string withoutComments(const std::string& text) {
    std::string out = text;
    enum { Code, Line, Block, String, Char } state = Code;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const char c = out[i];
        const char next = i + 1 < out.size() ? out[i + 1] : '\0';
        switch (state) {
        case Code:
            if (c == '/' && next == '/')
                state = Line, out[i] = ' ';
            else if (c == '/' && next == '*')
                state = Block, out[i] = ' ', out[++i] = ' ';
            else if (c == '"')
                state = String;
            else if (c == '\'')
                state = Char;
            break;
        case Line:
            if (c == '\n')
                state = Code;
            else
                out[i] = ' ';
            break;
        case Block:
            if (c == '*' && next == '/')
                state = Code, out[i] = ' ', out[++i] = ' ';
            else if (c != '\n')
                out[i] = ' ';
            break;
        case String:
        case Char:
            if (c == '\\')
                ++i;
            else if (c == (state == String ? '"' : '\'') || c == '\n')
                state = Code;
            break;
        }
    }
    return out;
}

bool escapes(const fs::path& path) {
    for (const auto& part : path)
        if (part == "..")
            return true;
    return false;
}

// Whether any part of `path` below `root` is a link (the file itself included).
bool throughLink(const fs::path& path, const fs::path& root) {
    fs::path walked = root;
    for (auto it = std::next(path.begin(), std::distance(root.begin(), root.end()));
         it != path.end(); ++it) {
        walked /= *it;
        struct stat info {};
        if (::lstat(walked.c_str(), &info) == 0 && S_ISLNK(info.st_mode))
            return true;
    }
    return false;
}

std::string readSmall(const fs::path& path) {
    std::error_code ec;
    if (fs::file_size(path, ec) > kMaxHeaderBytes || ec)
        return {};
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

class IncludeWalk {
public:
    explicit IncludeWalk(fs::path root) : root_(std::move(root)) {}

    std::optional<IncludeProblem> check(const std::string& source, const fs::path& folder,
                                        const std::string& name, int depth) {
        static const std::regex directive(R"(^\s*#\s*include(?:_next)?\b\s*(.*)$)");
        std::istringstream lines(withoutComments(source));
        std::string line;
        int number = 0;
        while (std::getline(lines, line)) {
            ++number;
            std::smatch match;
            if (!std::regex_match(line, match, directive))
                continue;
            const std::string rest = match[1].str();
            const auto problem = [&](const std::string& message) {
                return IncludeProblem{name, number, message};
            };
            const char open = rest.empty() ? '\0' : rest.front();
            const std::size_t close = rest.find(open == '<' ? '>' : '"', 1);
            if ((open != '"' && open != '<') || close == std::string::npos)
                return problem("a computed #include (a macro, not a name in quotes or angle "
                               "brackets) cannot be checked and is not allowed");
            const fs::path named = rest.substr(1, close - 1);
            if (named.is_absolute())
                return problem("#include of an absolute path (" + named.string() +
                               "): kernels include only headers of their workspace or the "
                               "toolkit");
            if (open == '<') {
                if (escapes(named))
                    return problem("#include <" + named.string() + "> climbs out with '..'");
                continue;
            }
            const fs::path resolved = (folder / named).lexically_normal();
            if (!isWithinFolder(resolved, root_))
                return problem("#include \"" + named.string() + "\" reaches outside the workspace");
            if (throughLink(resolved, root_))
                return problem("#include \"" + named.string() +
                               "\" goes through a link; kernels include real files only");
            std::error_code ec;
            if (!fs::is_regular_file(resolved, ec) || !visited_.insert(resolved.string()).second)
                continue; // not here (the include paths may have it), or checked already
            if (depth >= kMaxDepth)
                return problem("headers nested more than 16 deep");
            if (auto nested = check(readSmall(resolved), resolved.parent_path(),
                                    resolved.lexically_relative(root_).string(), depth + 1))
                return nested;
        }
        return std::nullopt;
    }

private:
    fs::path root_;
    std::set<std::string> visited_;
};

} // namespace

std::optional<IncludeProblem> unsafeInclude(const std::string& source, const fs::path& sourceFolder,
                                            const fs::path& root, const std::string& sourceName) {
    std::error_code ec;
    const fs::path normalRoot = fs::absolute(root, ec).lexically_normal();
    const fs::path normalFolder = fs::absolute(sourceFolder, ec).lexically_normal();
    return IncludeWalk(normalRoot).check(source, normalFolder, sourceName, 0);
}

fs::path includeRootFor(const fs::path& kernelFile) {
    std::error_code ec;
    const fs::path folder = fs::absolute(kernelFile, ec).lexically_normal().parent_path();
    return folder.filename() == "kernels" ? folder.parent_path() : folder;
}

} // namespace kwb::diagnostics
