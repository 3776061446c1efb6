#pragma once

#include "agent/store/episode_record.h"
#include "agent/store/trajectory_store.h"

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace kwb::agent {

// Episodes as JSONL, one episode a line, for sharing, training pipelines and replay:
// {"format": "kwb.episode", "format_version": 1, "episode": {...}, "events": [{...}, ...]}
// with the record and its events in sequence order (messages with their tool calls, per-turn
// evaluations, diffs, steering, the final status and reward).
inline constexpr std::string_view kEpisodeExportFormat = "kwb.episode";
inline constexpr int kEpisodeExportVersion = 1;

nlohmann::json toExportLine(const EpisodeTrajectory& trajectory);
// One line of an export file: "format" and "format_version" first (what a file manager's MIME
// sniffing matches, packaging/kernel-workbench-mime.xml), then the rest, and a newline.
void writeExportLine(const nlohmann::json& line, std::ostream& out);

// Writes the episodes in the order given, passed once more through the store's secret
// scrubbing (an older file may predate a key). The file variant writes beside the target and
// renames, so a failed export leaves no half-written file.
StoreResult<std::size_t> exportEpisodes(const TrajectoryStore& store,
                                        const std::vector<EpisodeId>& ids, std::ostream& out);
StoreResult<std::size_t> exportEpisodes(const TrajectoryStore& store,
                                        const std::vector<EpisodeId>& ids,
                                        const std::filesystem::path& file);

// Reads and checks every line; the first problem fails the whole read, naming its line
// ("line 3: ..."). Blank lines are skipped.
StoreResult<std::vector<EpisodeTrajectory>> readEpisodeLines(std::istream& in);

// Reads every line first and stores all the episodes in one transaction, so a malformed line
// imports nothing. Returns the stored records in file order.
StoreResult<std::vector<EpisodeRecord>> importEpisodes(TrajectoryStore& store, std::istream& in,
                                                       ImportIds ids = ImportIds::Renumber);
StoreResult<std::vector<EpisodeRecord>> importEpisodes(TrajectoryStore& store,
                                                       const std::filesystem::path& file,
                                                       ImportIds ids = ImportIds::Renumber);

} // namespace kwb::agent
