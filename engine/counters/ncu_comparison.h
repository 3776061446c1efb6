#pragma once

#include "engine/counters/ncu_report.h"

#include <optional>
#include <string>
#include <vector>

namespace kwb::counters {

// One details metric of a kernel in two reports, in the unit's base (so "3.50 ms" and
// "3,495,872 ns" compare); a side without the metric, or without a number, is nullopt.
struct MetricChange {
    std::string section;
    std::string name;
    std::string baseUnit;
    std::optional<double> before, after;
    // after / before; nullopt when either side is missing or before is 0.
    std::optional<double> ratio() const;
};

// A kernel of the two reports: paired by name, the n-th launch of a name in one with the n-th
// in the other. A kernel found in one report only has -1 as the other's ID and no changes.
struct KernelComparison {
    std::string kernelName;
    int beforeId = -1;
    int afterId = -1;
    std::vector<MetricChange> changes; // every details metric either side has, before's order
};

// Two evaluations' counters side by side (the "before my edit" and "after" of a hand-edit
// loop, or a candidate and the reference's kernels), kernels in the order of `before`, then
// those only `after` has.
std::vector<KernelComparison> compareReports(const NcuReport& before, const NcuReport& after);

} // namespace kwb::counters
