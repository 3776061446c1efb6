#pragma once

#include "engine/timeline/kernel_timeline.h"

#include <cstdint>
#include <vector>

namespace kwb::timeline {

// What one pixel column of a folded stream lane holds: how many events start in it, how much of
// its time they keep the stream busy (0..1), and how many of them match the name filter. Drawn
// as a bar per column, it tells a zoomed-out million kernels apart where a folded block alone
// says only "750000x" (Nsight Systems' row summaries do the same).
struct DensityColumn {
    std::uint32_t count = 0;
    std::uint32_t matches = 0;
    float busy = 0.0f;
};

// matchPrefix[i] = how many of events[0..i) have a name with nameMatches[nameId] set; size
// events.size() + 1. Made once per filter change, it counts the matches of any index range in
// O(1).
std::vector<std::uint32_t> matchPrefix(const std::vector<TimelineEvent>& events,
                                       const std::vector<std::uint8_t>& nameMatches);

// `columns` columns of `columnNs` each from `startNs`, over the lane's events with indices in
// [first, last): each event is counted in the column its start falls in, its whole duration
// there (the density is for zoom levels where events are narrower than a column). Work is one
// galloping search per column. `matches` may be null (no filter). The lane needs busyPrefix.
void densityColumns(const StreamLane& lane, const std::vector<std::uint32_t>* matches,
                    std::size_t first, std::size_t last, double startNs, double columnNs,
                    int columns, std::vector<DensityColumn>& out);

} // namespace kwb::timeline
