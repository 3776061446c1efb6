#pragma once

#include "agent/store/episode_record.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace kwb::agent {

// One episode as the panes show it: the record and its events in sequence order. Immutable
// once made; a newer state is a new snapshot that shares the unchanged events, so handing a
// live episode to the UI thread after every step copies pointers, not event payloads.
struct EpisodeSnapshot {
    EpisodeRecord record;
    std::vector<std::shared_ptr<const EpisodeEvent>> events;
};

using EpisodeSnapshotPtr = std::shared_ptr<const EpisodeSnapshot>;

EpisodeSnapshotPtr makeEpisodeSnapshot(EpisodeTrajectory trajectory);
// `base` with `event` appended, or `base` itself when the event is not newer than its last one
// (a subscriber that loaded history may hear an event it already has).
EpisodeSnapshotPtr withEvent(const EpisodeSnapshotPtr& base, EpisodeEvent event);
// `base` with the newer record; lastSequence stays the events' own.
EpisodeSnapshotPtr withRecord(const EpisodeSnapshotPtr& base, EpisodeRecord record);
// The first `count` events, for stepping through a finished episode.
EpisodeSnapshotPtr truncatedTo(const EpisodeSnapshotPtr& base, std::size_t count);

} // namespace kwb::agent
