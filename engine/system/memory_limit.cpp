#include "engine/system/memory_limit.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kwb {

namespace {

// v1 reports "no limit" as a huge page-rounded number; anything this large limits nothing.
constexpr std::uint64_t kUnlimited = 1ULL << 60;

std::optional<std::uint64_t> readLimit(const fs::path& file) {
    std::ifstream in(file);
    std::string text;
    if (!(in >> text) || text == "max")
        return std::nullopt;
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value >= kUnlimited)
        return std::nullopt;
    return value;
}

// Keeps the lower of two limits, where either may be missing.
void keepLowest(std::optional<std::uint64_t>& lowest, std::optional<std::uint64_t> limit) {
    if (limit)
        lowest = std::min(lowest.value_or(*limit), *limit);
}

// The lowest limit in `file` of the group at `path` below `mount` and of every group above it.
std::optional<std::uint64_t> lowestOnPath(const fs::path& mount, const std::string& path,
                                          const char* file) {
    std::optional<std::uint64_t> lowest;
    fs::path group = fs::path(path).relative_path();
    for (;;) {
        keepLowest(lowest, readLimit(mount / group / file));
        if (group.empty())
            return lowest;
        group = group.parent_path();
    }
}

} // namespace

std::optional<std::uint64_t> cgroupMemoryLimit(const std::string& procSelfCgroup,
                                               const std::string& cgroupRoot) {
    std::optional<std::uint64_t> lowest;
    std::istringstream lines(procSelfCgroup);
    std::string line;
    while (std::getline(lines, line)) {
        // "hierarchy-id:controllers:path"; the path may itself hold colons.
        const auto first = line.find(':');
        const auto second = first == std::string::npos ? first : line.find(':', first + 1);
        if (second == std::string::npos)
            continue;
        const std::string id = line.substr(0, first);
        const std::string controllers = line.substr(first + 1, second - first - 1);
        const std::string path = line.substr(second + 1);
        if (id == "0" && controllers.empty()) {
            // v2: mounted at the root, or at unified/ beside v1 hierarchies.
            keepLowest(lowest, lowestOnPath(cgroupRoot, path, "memory.max"));
            keepLowest(lowest, lowestOnPath(fs::path(cgroupRoot) / "unified", path, "memory.max"));
            continue;
        }
        std::istringstream names(controllers);
        std::string name;
        while (std::getline(names, name, ','))
            if (name == "memory")
                keepLowest(lowest, lowestOnPath(fs::path(cgroupRoot) / "memory", path,
                                                "memory.limit_in_bytes"));
    }
    return lowest;
}

std::uint64_t usableMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    std::uint64_t usable = pages > 0 && pageSize > 0 ? static_cast<std::uint64_t>(pages) *
                                                           static_cast<std::uint64_t>(pageSize)
                                                     : 0;
    std::ifstream in("/proc/self/cgroup");
    std::stringstream text;
    text << in.rdbuf();
    if (const auto limit = cgroupMemoryLimit(text.str()))
        usable = usable ? std::min(usable, *limit) : *limit;
    return usable;
}

} // namespace kwb
