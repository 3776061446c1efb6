#include "engine/diagnostics/ptx_kernel_facts.h"

#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace kwb::diagnostics {
namespace {

struct PtxFunction {
    std::string name;
    bool isEntry = false;
    std::string directives; // between the parameter list and the body's '{'
    std::string body;
};

bool isIdentifierChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}

bool mentions(const std::string& text, const std::string& symbol) {
    for (std::size_t at = text.find(symbol); at != std::string::npos;
         at = text.find(symbol, at + 1)) {
        const bool startOk = at == 0 || !isIdentifierChar(text[at - 1]);
        const std::size_t end = at + symbol.size();
        const bool endOk = end >= text.size() || !isIdentifierChar(text[end]);
        if (startOk && endOk)
            return true;
    }
    return false;
}

// Splits the module into .entry/.func definitions by brace depth. Declarations without a body
// (prototypes ending in ';') are skipped.
std::vector<PtxFunction> splitFunctions(const std::string& ptx,
                                        std::vector<std::string>& externShared) {
    static const std::regex header(
        R"(^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)?(\.entry|\.func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*))");
    static const std::regex externDecl(R"(\.extern\s+\.shared\b.*?([A-Za-z_$][\w$]*)\s*\[)");
    std::vector<PtxFunction> functions;
    std::istringstream lines(ptx);
    std::string line;
    PtxFunction* open = nullptr;
    bool inBody = false;
    int depth = 0;
    while (std::getline(lines, line)) {
        std::smatch match;
        // The substring tests keep std::regex off the thousands of instruction lines (a
        // 200-line kernel file gives ~50 KB of PTX; regex on each line cost 100 ms in Debug).
        if (line.find(".extern") != std::string::npos && std::regex_search(line, match, externDecl))
            externShared.push_back(match[1]);
        if (!open) {
            const bool maybeHeader =
                line.find(".entry") != std::string::npos || line.find(".func") != std::string::npos;
            if (maybeHeader && std::regex_search(line, match, header)) {
                functions.push_back({match[2], match[1] == ".entry", "", ""});
                open = &functions.back();
                inBody = false;
                depth = 0;
                const std::size_t last = line.find_last_not_of(" \t");
                if (line[last] == ';') { // a one-line prototype
                    functions.pop_back();
                    open = nullptr;
                }
            }
            continue;
        }
        if (!inBody) {
            const std::size_t brace = line.find('{');
            if (brace == std::string::npos) {
                const std::size_t last = line.find_last_not_of(" \t");
                if (last != std::string::npos && line[last] == ';') {
                    functions.pop_back(); // a prototype: its definition comes later
                    open = nullptr;
                    continue;
                }
                open->directives += line + "\n";
                continue;
            }
            inBody = true;
        }
        for (char c : line)
            depth += c == '{' ? 1 : (c == '}' ? -1 : 0);
        open->body += line + "\n";
        if (depth <= 0) {
            open = nullptr;
            inBody = false;
        }
    }
    return functions;
}

// ".maxntid 16, 8, 1" -> 128; `directive` is "maxntid" or "reqntid". 0 when absent.
int threadProduct(const std::string& directives, const std::string& directive) {
    static const std::regex pattern(
        R"(\.(maxntid|reqntid)\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?)");
    std::smatch match;
    std::string::const_iterator from = directives.begin();
    while (std::regex_search(from, directives.end(), match, pattern) && match[1] != directive)
        from = match[0].second;
    if (match.empty() || match[1] != directive)
        return 0;
    int product = 1;
    for (int i = 2; i <= 4; ++i)
        if (match[i].matched)
            product *= std::stoi(match[i]);
    return product;
}

} // namespace

std::vector<PtxKernelFacts> scanPtxKernels(const std::string& ptx) {
    std::vector<std::string> externShared;
    const std::vector<PtxFunction> functions = splitFunctions(ptx, externShared);

    // Which functions touch dynamic shared memory themselves, then through calls (fixed point).
    std::map<std::string, bool> touches;
    for (const auto& f : functions) {
        bool direct = f.body.find(".extern .shared") != std::string::npos;
        for (const auto& symbol : externShared)
            direct = direct || mentions(f.body, symbol);
        touches[f.name] = direct;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (const auto& f : functions) {
            if (touches[f.name])
                continue;
            for (const auto& callee : functions)
                if (!callee.isEntry && touches[callee.name] && callee.name != f.name &&
                    mentions(f.body, callee.name)) {
                    touches[f.name] = changed = true;
                    break;
                }
        }
    }

    std::vector<PtxKernelFacts> kernels;
    for (const auto& f : functions) {
        if (!f.isEntry)
            continue;
        PtxKernelFacts facts;
        facts.mangledName = f.name;
        facts.launchBoundThreads = threadProduct(f.directives, "maxntid");
        if (facts.launchBoundThreads == 0)
            facts.launchBoundThreads = threadProduct(f.directives, "reqntid");
        facts.usesDynamicShared = touches[f.name];
        kernels.push_back(std::move(facts));
    }
    return kernels;
}

} // namespace kwb::diagnostics
