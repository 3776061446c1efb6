#include "engine/system/default_budgets.h"

#include "engine/system/memory_limit.h"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace kwb {

std::uint64_t defaultMemoryBudget() {
    constexpr std::uint64_t kCeiling = 16ULL << 30;
    const std::uint64_t usable = usableMemoryBytes(); // a container's or job's cgroup limit too
    return usable ? std::min(kCeiling, usable / 4 * 3) : kCeiling;
}

std::uint64_t inputBudgetWithin(std::uint64_t memoryBudget) {
    return (memoryBudget ? memoryBudget : defaultMemoryBudget()) / 4;
}

std::uint64_t defaultDiskBudget(const std::vector<std::string>& writablePaths) {
    constexpr std::uint64_t kCeiling = 8ULL << 30;
    std::uint64_t budget = kCeiling;
    for (const auto& path : writablePaths) {
        std::error_code ec;
        fs::path existing = path;
        while (!existing.empty() && !fs::exists(existing, ec))
            existing = existing.parent_path();
        const fs::space_info space = fs::space(existing.empty() ? "/" : existing, ec);
        if (!ec)
            budget = std::min(budget, space.available / 2);
    }
    return std::max<std::uint64_t>(budget, 256ULL << 20);
}

} // namespace kwb
