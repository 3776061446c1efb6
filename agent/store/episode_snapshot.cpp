#include "agent/store/episode_snapshot.h"

#include <algorithm>

namespace kwb::agent {

EpisodeSnapshotPtr makeEpisodeSnapshot(EpisodeTrajectory trajectory) {
    auto snapshot = std::make_shared<EpisodeSnapshot>();
    snapshot->record = std::move(trajectory.episode);
    snapshot->events.reserve(trajectory.events.size());
    for (EpisodeEvent& event : trajectory.events)
        snapshot->events.push_back(std::make_shared<const EpisodeEvent>(std::move(event)));
    return snapshot;
}

EpisodeSnapshotPtr withEvent(const EpisodeSnapshotPtr& base, EpisodeEvent event) {
    if (base && !base->events.empty() && event.sequence <= base->events.back()->sequence)
        return base;
    auto next =
        base ? std::make_shared<EpisodeSnapshot>(*base) : std::make_shared<EpisodeSnapshot>();
    next->record.lastSequence = std::max(next->record.lastSequence, event.sequence);
    next->events.push_back(std::make_shared<const EpisodeEvent>(std::move(event)));
    return next;
}

EpisodeSnapshotPtr withRecord(const EpisodeSnapshotPtr& base, EpisodeRecord record) {
    auto next =
        base ? std::make_shared<EpisodeSnapshot>(*base) : std::make_shared<EpisodeSnapshot>();
    next->record = std::move(record);
    return next;
}

EpisodeSnapshotPtr truncatedTo(const EpisodeSnapshotPtr& base, std::size_t count) {
    if (!base || count >= base->events.size())
        return base;
    auto next = std::make_shared<EpisodeSnapshot>();
    next->record = base->record;
    next->events.assign(base->events.begin(), base->events.begin() + static_cast<long>(count));
    return next;
}

} // namespace kwb::agent
