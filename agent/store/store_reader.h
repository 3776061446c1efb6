#pragma once

#include "agent/store/episode_record.h"
#include "agent/store/episode_snapshot.h"
#include "agent/store/trajectory_store.h"

#include <memory>
#include <string>
#include <vector>

namespace kwb::agent {

// The GUI's reads of the trajectory store. They block on SQLite, so they run on the engine
// thread only (EngineBridge); each opens its own connection, which SQLite's WAL mode lets read
// while an agent writes the same file.

struct EpisodeListSnapshot {
    std::string storePath;
    std::vector<EpisodeRecord> episodes; // newest first, as the store lists them
    std::string error;                   // empty when the read worked
};

struct EpisodeSetSnapshot {
    std::vector<EpisodeSnapshotPtr> episodes; // in the order asked for
    std::string error;
};

// Opens an existing store for a read: nullptr when the file is missing (`missing` set, `error`
// "no trajectory store at PATH") or cannot be opened (`error`); it never creates one.
struct StoreForReading {
    std::unique_ptr<TrajectoryStore> store;
    bool missing = false;
    std::string error;
};
StoreForReading openStoreForReading(const std::string& storePath);

// A missing file is an empty list, not an error: browsing must not create a store.
EpisodeListSnapshot readEpisodeList(const std::string& storePath);
EpisodeSetSnapshot readEpisodes(const std::string& storePath, const std::vector<EpisodeId>& ids);

} // namespace kwb::agent
