#include "engine/diagnostics/compile_path_choice.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

namespace kwb::diagnostics {
namespace {

int lineAt(const std::string& text, std::size_t offset) {
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

bool isTorchHeader(const std::string& header) {
    for (const char* prefix : {"torch/", "ATen/", "c10/", "pybind11/", "caffe2/"})
        if (header.rfind(prefix, 0) == 0)
            return true;
    return header == "Python.h";
}

bool isHostRuntimeHeader(const std::string& header) {
    return header == "cuda_runtime.h" || header == "cuda_runtime_api.h" || header == "cuda.h";
}

bool inToolkit(const std::string& header, const std::vector<std::string>& dirs) {
    std::error_code ec;
    return std::any_of(dirs.begin(), dirs.end(), [&](const std::string& dir) {
        return std::filesystem::is_regular_file(std::filesystem::path(dir) / header, ec);
    });
}

} // namespace

std::string toString(CompilePath path) {
    return path == CompilePath::Nvrtc ? "nvrtc" : "nvcc";
}

std::string blankCommentsAndLiterals(const std::string& source, bool keepStrings) {
    std::string out = source;
    const std::size_t n = source.size();
    auto blank = [&](std::size_t from, std::size_t to) {
        for (std::size_t k = from; k < to && k < n; ++k)
            if (out[k] != '\n')
                out[k] = ' ';
    };
    std::size_t i = 0;
    while (i < n) {
        const char c = source[i];
        const char next = i + 1 < n ? source[i + 1] : '\0';
        if (c == '/' && next == '/') {
            std::size_t end = source.find('\n', i);
            end = end == std::string::npos ? n : end;
            blank(i, end);
            i = end;
        } else if (c == '/' && next == '*') {
            std::size_t end = source.find("*/", i + 2);
            end = end == std::string::npos ? n : end + 2;
            blank(i, end);
            i = end;
        } else if (c == 'R' && next == '"' &&
                   (i == 0 || !(std::isalnum(static_cast<unsigned char>(source[i - 1])) ||
                                source[i - 1] == '_'))) {
            // Raw string R"delim( ... )delim"
            const std::size_t open = source.find('(', i + 2);
            if (open == std::string::npos) {
                ++i;
                continue;
            }
            const std::string terminator = ")" + source.substr(i + 2, open - i - 2) + "\"";
            std::size_t end = source.find(terminator, open);
            end = end == std::string::npos ? n : end + terminator.size();
            if (!keepStrings)
                blank(i, end);
            i = end;
        } else if (c == '"' ||
                   (c == '\'' &&
                    !(i > 0 && std::isxdigit(static_cast<unsigned char>(source[i - 1]))))) {
            // A quote after a hex digit is a digit separator (1'000'000), not a char literal.
            std::size_t j = i + 1;
            while (j < n && source[j] != c && source[j] != '\n')
                j += source[j] == '\\' ? 2 : 1;
            const std::size_t end = std::min(n, j + 1);
            if (!keepStrings)
                blank(i, end);
            i = end;
        } else {
            ++i;
        }
    }
    return out;
}

CompilePathChoice chooseCompilePath(const std::string& source,
                                    const std::vector<std::string>& toolkitIncludeDirs) {
    const std::string code = blankCommentsAndLiterals(source, false);
    if (const std::size_t launch = code.find("<<<"); launch != std::string::npos)
        return {CompilePath::Nvcc,
                "host code: a kernel launch '<<<' at line " + std::to_string(lineAt(code, launch)),
                lineAt(code, launch)};

    static const std::regex include(R"(^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"])");
    const std::string withStrings = blankCommentsAndLiterals(source, true);
    std::istringstream lines(withStrings);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
        std::smatch match;
        if (!std::regex_search(line, match, include) || match[1] == "\"")
            continue;
        const std::string header = match[2];
        const std::string at = " at line " + std::to_string(number);
        if (isTorchHeader(header))
            return {CompilePath::Nvcc, "includes the torch header <" + header + ">" + at, number};
        if (isHostRuntimeHeader(header))
            return {CompilePath::Nvcc, "includes the host runtime header <" + header + ">" + at,
                    number};
        if (!inToolkit(header, toolkitIncludeDirs))
            return {CompilePath::Nvcc,
                    "includes <" + header + ">" + at + ", a host header NVRTC cannot open", number};
    }
    return {CompilePath::Nvrtc, "device code only", 0};
}

} // namespace kwb::diagnostics
