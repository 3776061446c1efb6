#include "engine/timeline/lane_density.h"

#include <algorithm>

namespace kwb::timeline {
namespace {

// First index in [from, to) whose event starts at or after `limit`, galloping out from `from`:
// the columns are walked left to right, so each answer is near the previous one.
std::size_t firstAtOrAfter(const std::vector<TimelineEvent>& events, std::size_t from,
                           std::size_t to, double limit) {
    std::size_t lo = from;
    std::size_t step = 1;
    std::size_t probe = from;
    while (probe < to && static_cast<double>(events[probe].startNs) < limit) {
        lo = probe + 1;
        probe = from + step;
        step *= 2;
    }
    const auto begin = events.begin();
    return static_cast<std::size_t>(
        std::lower_bound(
            begin + static_cast<std::ptrdiff_t>(lo),
            begin + static_cast<std::ptrdiff_t>(std::min(probe, to)), limit,
            [](const TimelineEvent& e, double t) { return static_cast<double>(e.startNs) < t; }) -
        begin);
}

} // namespace

std::vector<std::uint32_t> matchPrefix(const std::vector<TimelineEvent>& events,
                                       const std::vector<std::uint8_t>& nameMatches) {
    std::vector<std::uint32_t> prefix(events.size() + 1, 0);
    std::uint32_t count = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const std::uint32_t name = events[i].nameId;
        count += name < nameMatches.size() && nameMatches[name] ? 1u : 0u;
        prefix[i + 1] = count;
    }
    return prefix;
}

void densityColumns(const StreamLane& lane, const std::vector<std::uint32_t>* matches,
                    std::size_t first, std::size_t last, double startNs, double columnNs,
                    int columns, std::vector<DensityColumn>& out) {
    out.assign(static_cast<std::size_t>(std::max(columns, 0)), DensityColumn{});
    const auto& events = lane.events;
    last = std::min(last, events.size());
    if (columns <= 0 || columnNs <= 0.0 || first >= last ||
        lane.busyPrefix.size() != events.size() + 1)
        return;
    const bool counted = matches && matches->size() == events.size() + 1;
    // Events before the first column belong to it, those after the last to the last.
    std::size_t begin = first;
    for (int c = 0; c < columns; ++c) {
        const std::size_t end =
            c + 1 == columns ? last
                             : firstAtOrAfter(events, begin, last, startNs + (c + 1) * columnNs);
        DensityColumn& column = out[static_cast<std::size_t>(c)];
        column.count = static_cast<std::uint32_t>(end - begin);
        const double busy =
            static_cast<double>(lane.busyPrefix[end] - lane.busyPrefix[begin]) / columnNs;
        column.busy = static_cast<float>(std::clamp(busy, 0.0, 1.0));
        if (counted)
            column.matches = (*matches)[end] - (*matches)[begin];
        begin = end;
    }
}

} // namespace kwb::timeline
