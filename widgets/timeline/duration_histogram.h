#pragma once

#include "engine/timeline/kernel_timeline.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace kwb::ui {

// One kernel's instance, by stream lane and index in it.
struct KernelInstance {
    int lane = 0;
    std::uint32_t index = 0;
    std::int64_t startNs = 0;
    std::int64_t durationNs = 0;
};

// The durations of every instance of one kernel name, binned on a logarithmic axis (Tracy's Find
// Zone): a kernel that is usually 8 us but sometimes 40 us shows two humps, and a bin selects
// the instances behind it. Instances are kept in start order.
class DurationHistogram {
public:
    DurationHistogram() = default;
    DurationHistogram(const kwb::timeline::KernelTimeline& timeline, std::uint32_t nameId,
                      int bins);

    bool empty() const { return instances_.empty(); }
    int binCount() const { return static_cast<int>(counts_.size()); }
    std::uint32_t count(int bin) const { return counts_[static_cast<std::size_t>(bin)]; }
    std::uint32_t maxCount() const { return maxCount_; }
    std::int64_t minNs() const { return minNs_; }
    std::int64_t maxNs() const { return maxNs_; }
    std::int64_t medianNs() const { return medianNs_; }
    // The durations a bin holds: [low, high), the last bin's high included.
    std::pair<double, double> binRange(int bin) const;
    int binOf(std::int64_t durationNs) const;

    // Instances whose bin is in [firstBin, lastBin], in start order.
    std::vector<KernelInstance> instancesIn(int firstBin, int lastBin) const;
    const std::vector<KernelInstance>& instances() const { return instances_; }

private:
    std::vector<KernelInstance> instances_;
    std::vector<std::uint32_t> counts_;
    std::uint32_t maxCount_ = 0;
    std::int64_t minNs_ = 0;
    std::int64_t maxNs_ = 0;
    std::int64_t medianNs_ = 0;
    double logMin_ = 0.0;
    double logStep_ = 1.0;
};

} // namespace kwb::ui
