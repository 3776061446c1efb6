#include "widgets/timeline/duration_histogram.h"

#include <algorithm>
#include <cmath>

namespace kwb::ui {

DurationHistogram::DurationHistogram(const kwb::timeline::KernelTimeline& timeline,
                                     std::uint32_t nameId, int bins) {
    using kwb::timeline::EventKind;
    for (std::size_t lane = 0; lane < timeline.streams.size(); ++lane) {
        const auto& events = timeline.streams[lane].events;
        for (std::size_t i = 0; i < events.size(); ++i)
            if (events[i].nameId == nameId && events[i].kind == EventKind::Kernel)
                instances_.push_back({static_cast<int>(lane), static_cast<std::uint32_t>(i),
                                      events[i].startNs, events[i].durationNs()});
    }
    if (instances_.empty() || bins <= 0)
        return;
    std::sort(instances_.begin(), instances_.end(), [](const auto& a, const auto& b) {
        return a.startNs != b.startNs ? a.startNs < b.startNs : a.lane < b.lane;
    });
    std::vector<std::int64_t> durations;
    durations.reserve(instances_.size());
    for (const auto& instance : instances_)
        durations.push_back(std::max<std::int64_t>(instance.durationNs, 1));
    const auto middle = durations.begin() + static_cast<std::ptrdiff_t>(durations.size() / 2);
    std::nth_element(durations.begin(), middle, durations.end());
    medianNs_ = *middle;
    const auto [lowest, highest] = std::minmax_element(durations.begin(), durations.end());
    minNs_ = *lowest;
    maxNs_ = *highest;
    // A log axis from the shortest to the longest; one that are all alike gets a decade's width
    // so its single hump sits in the middle.
    logMin_ = std::log10(static_cast<double>(minNs_));
    double logMax = std::log10(static_cast<double>(maxNs_));
    if (logMax - logMin_ < 1e-9) {
        logMin_ -= 0.5;
        logMax += 0.5;
    }
    logStep_ = (logMax - logMin_) / bins;
    counts_.assign(static_cast<std::size_t>(bins), 0);
    for (const auto& instance : instances_)
        ++counts_[static_cast<std::size_t>(binOf(instance.durationNs))];
    maxCount_ = *std::max_element(counts_.begin(), counts_.end());
}

std::pair<double, double> DurationHistogram::binRange(int bin) const {
    return {std::pow(10.0, logMin_ + bin * logStep_),
            std::pow(10.0, logMin_ + (bin + 1) * logStep_)};
}

int DurationHistogram::binOf(std::int64_t durationNs) const {
    if (counts_.empty())
        return 0;
    const double position =
        (std::log10(static_cast<double>(std::max<std::int64_t>(durationNs, 1))) - logMin_) /
        logStep_;
    return std::clamp(static_cast<int>(std::floor(position)), 0, binCount() - 1);
}

std::vector<KernelInstance> DurationHistogram::instancesIn(int firstBin, int lastBin) const {
    if (firstBin > lastBin)
        std::swap(firstBin, lastBin);
    std::vector<KernelInstance> out;
    for (const auto& instance : instances_) {
        const int bin = binOf(instance.durationNs);
        if (bin >= firstBin && bin <= lastBin)
            out.push_back(instance);
    }
    return out;
}

} // namespace kwb::ui
