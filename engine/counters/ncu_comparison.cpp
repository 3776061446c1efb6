#include "engine/counters/ncu_comparison.h"

#include <map>

namespace kwb::counters {

std::optional<double> MetricChange::ratio() const {
    if (!before || !after || *before == 0)
        return std::nullopt;
    return *after / *before;
}

std::vector<KernelComparison> compareReports(const NcuReport& before, const NcuReport& after) {
    // name -> the launches of that name in `after`, in order, not yet paired
    std::map<std::string, std::vector<const KernelCounters*>> unpaired;
    for (const KernelCounters& k : after.kernels)
        unpaired[k.kernelName].push_back(&k);
    std::map<std::string, std::size_t> taken; // name -> how many of `after`'s are paired
    std::vector<KernelComparison> result;
    for (const KernelCounters& b : before.kernels) {
        KernelComparison c;
        c.kernelName = b.kernelName;
        c.beforeId = b.id;
        std::size_t& next = taken[b.kernelName];
        const auto& candidates = unpaired[b.kernelName];
        const KernelCounters* a = next < candidates.size() ? candidates[next++] : nullptr;
        if (a) {
            c.afterId = a->id;
            for (const SectionMetric& m : b.metrics) {
                const SectionMetric* other = a->metric(m.section, m.name);
                c.changes.push_back({m.section, m.name, m.value.baseUnit(), m.value.baseValue(),
                                     other ? other->value.baseValue() : std::nullopt});
            }
            for (const SectionMetric& m : a->metrics)
                if (!b.metric(m.section, m.name))
                    c.changes.push_back(
                        {m.section, m.name, m.value.baseUnit(), std::nullopt, m.value.baseValue()});
        }
        result.push_back(std::move(c));
    }
    for (const auto& [name, launches] : unpaired)
        for (std::size_t i = taken[name]; i < launches.size(); ++i)
            result.push_back({name, -1, launches[i]->id, {}});
    return result;
}

} // namespace kwb::counters
