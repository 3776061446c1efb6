#include "engine/diagnostics/ptxas_verbose_log.h"

#include <regex>
#include <sstream>

namespace kwb::diagnostics {
namespace {

// "364 bytes cmem[0], 8 bytes cmem[2]" -> 372; nullopt when the text names no bank.
std::optional<long> sumConstantBanks(const std::string& text) {
    static const std::regex bank(R"((\d+) bytes cmem\[\d+\])");
    std::optional<long> total;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), bank);
         it != std::sregex_iterator(); ++it)
        total = total.value_or(0) + std::stol((*it)[1]);
    return total;
}

long bytesBefore(const std::string& text, const std::regex& pattern) {
    std::smatch match;
    return std::regex_search(text, match, pattern) ? std::stol(match[1]) : 0;
}

} // namespace

const PtxasFunctionReport* PtxasReport::find(const std::string& mangledName) const {
    for (const auto& f : functions)
        if (f.mangledName == mangledName)
            return &f;
    return nullptr;
}

PtxasReport parsePtxasVerbose(const std::string& log) {
    static const std::regex entry(R"(Compiling entry function '([^']+)' for '([^']+)')");
    static const std::regex properties(R"(ptxas info\s*: Function properties for (\S+))");
    static const std::regex frame(
        R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
    static const std::regex used(R"(ptxas info\s*: Used (\d+) registers(.*)$)");
    static const std::regex barriers(R"(used (\d+) barriers)");
    static const std::regex smem(R"((\d+) bytes smem)");
    static const std::regex stack(R"((\d+) bytes cumulative stack size)");
    static const std::regex gmem(R"(ptxas info\s*: (\d+) bytes gmem(.*)$)");
    static const std::regex compileTime(R"(ptxas info\s*: Compile time = ([0-9.]+) ms)");

    PtxasReport report;
    PtxasFunctionReport* current = nullptr;
    auto select = [&](const std::string& name) {
        for (auto& f : report.functions)
            if (f.mangledName == name) {
                current = &f;
                return;
            }
        report.functions.push_back({});
        report.functions.back().mangledName = name;
        current = &report.functions.back();
    };

    std::istringstream lines(log);
    std::string line;
    while (std::getline(lines, line)) {
        std::smatch match;
        if (std::regex_search(line, match, entry)) {
            select(match[1]);
            current->isEntry = true;
            current->arch = match[2];
        } else if (std::regex_search(line, match, properties)) {
            // Non-entry functions appear only here; an entry's block follows its "Compiling".
            select(match[1]);
        } else if (current && std::regex_search(line, match, frame)) {
            current->stackFrameBytes = std::stol(match[1]);
            current->spillStoreBytes = std::stol(match[2]);
            current->spillLoadBytes = std::stol(match[3]);
        } else if (current && std::regex_search(line, match, used)) {
            const std::string rest = match[2];
            current->registers = std::stoi(match[1]);
            current->barriers = static_cast<int>(bytesBefore(rest, barriers));
            current->sharedBytes = bytesBefore(rest, smem);
            current->cumulativeStackBytes = bytesBefore(rest, stack);
            current->constantBytes = sumConstantBanks(rest);
        } else if (current && std::regex_search(line, match, compileTime)) {
            current->compileMs = std::stod(match[1]);
        } else if (std::regex_search(line, match, gmem)) {
            report.globalBytes = std::stol(match[1]);
            report.moduleConstantBytes = sumConstantBanks(match[2]);
        }
    }
    return report;
}

} // namespace kwb::diagnostics
