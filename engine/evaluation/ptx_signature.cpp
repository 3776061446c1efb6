#include "engine/evaluation/ptx_signature.h"

#include "engine/diagnostics/demangle.h"

#include <algorithm>
#include <map>
#include <regex>

namespace kwb {
namespace {

int typeSize(const std::string& type) {
    static const std::map<std::string, int> sizes = {{"u8", 1},  {"s8", 1},  {"b8", 1},  {"u16", 2},
                                                     {"s16", 2}, {"b16", 2}, {"f16", 2}, {"u32", 4},
                                                     {"s32", 4}, {"b32", 4}, {"f32", 4}, {"u64", 8},
                                                     {"s64", 8}, {"b64", 8}, {"f64", 8}};
    auto it = sizes.find(type);
    return it == sizes.end() ? 0 : it->second;
}

} // namespace

std::vector<PtxEntry> parsePtxEntries(const std::string& ptx) {
    static const std::regex entryPattern(R"(\.entry\s+([A-Za-z_$][\w$]*)\s*\()");
    static const std::regex paramPattern(
        R"(\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+(?:\.ptr\s+(?:\.\w+\s+)*)?[\w$]+(?:\[(\d+)\])?)");
    std::vector<PtxEntry> entries;
    auto begin = std::sregex_iterator(ptx.begin(), ptx.end(), entryPattern);
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
        PtxEntry entry;
        entry.symbol = (*it)[1];
        const std::size_t open = static_cast<std::size_t>(it->position(0) + it->length(0));
        const std::size_t close = ptx.find(')', open);
        if (close == std::string::npos)
            break;
        const std::string list = ptx.substr(open, close - open);
        for (auto p = std::sregex_iterator(list.begin(), list.end(), paramPattern);
             p != std::sregex_iterator(); ++p) {
            PtxParameter parameter;
            parameter.type = (*p)[1];
            const int elementSize = typeSize(parameter.type);
            const int count = (*p)[2].matched ? std::stoi((*p)[2]) : 1;
            parameter.sizeBytes = elementSize * count;
            entry.parameters.push_back(parameter);
        }
        // Directives between the parameter list and the body: .maxntid comes from
        // __launch_bounds__ and caps the block size the kernel may be launched with.
        const std::size_t body = ptx.find('{', close);
        const std::string directives =
            ptx.substr(close + 1, body == std::string::npos ? 0 : body - close - 1);
        static const std::regex maxntidPattern(
            R"(\.maxntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?)");
        if (std::smatch match; std::regex_search(directives, match, maxntidPattern)) {
            int threads = std::stoi(match[1]);
            for (int group = 2; group <= 3; ++group)
                if (match[group].matched)
                    threads *= std::stoi(match[group]);
            entry.maxThreadsPerBlock = threads;
        }
        entries.push_back(std::move(entry));
    }
    return entries;
}

std::string kernelBaseName(const std::string& symbol) {
    if (symbol.rfind("_Z", 0) != 0)
        return symbol;
    std::string name = diagnostics::demangleSymbol(symbol);
    if (name == symbol)
        return symbol; // not demangleable
    // "void ns::kernel<float>(float const*, ...)": the identifier before the template
    // arguments and the parameter list, without namespaces.
    const std::size_t end = std::min(name.find('<'), name.find('('));
    name = name.substr(0, end == std::string::npos ? name.size() : end);
    if (const std::size_t colon = name.rfind("::"); colon != std::string::npos)
        name = name.substr(colon + 2);
    if (const std::size_t space = name.rfind(' '); space != std::string::npos)
        name = name.substr(space + 1);
    return name.empty() ? symbol : name;
}

} // namespace kwb
