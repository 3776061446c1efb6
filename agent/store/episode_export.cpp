#include "agent/store/episode_export.h"

#include "engine/system/bounded_json.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <istream>
#include <ostream>
#include <string>
#include <system_error>

using nlohmann::json;

namespace kwb::agent {

namespace {

StoreError lineError(std::size_t line, const std::string& message) {
    return StoreError{"line " + std::to_string(line) + ": " + message};
}

bool isBlank(const std::string& line) {
    return line.find_first_not_of(" \t\r") == std::string::npos;
}

// One line's trajectory, or the reason it is not one (without the line number).
std::optional<EpisodeTrajectory> parseLine(const std::string& text, std::string& error) {
    const json line = parseBoundedJson(text, JsonLimits{}, &error);
    if (line.is_discarded())
        return std::nullopt;
    const json format = line.is_object() ? line.value("format", json()) : json();
    if (!format.is_string() || format.get<std::string>() != kEpisodeExportFormat) {
        error = "not a Kernel Workbench episode (no \"format\": \"" +
                std::string(kEpisodeExportFormat) + "\")";
        return std::nullopt;
    }
    const json version = line.value("format_version", json());
    if (!version.is_number_integer() || version.get<std::int64_t>() < 1) {
        error = "\"format_version\" must be a positive integer";
        return std::nullopt;
    }
    if (version.get<std::int64_t>() > kEpisodeExportVersion) {
        error = "format version " + version.dump() +
                " is newer than this Kernel Workbench reads (" +
                std::to_string(kEpisodeExportVersion) + ")";
        return std::nullopt;
    }

    EpisodeTrajectory trajectory;
    std::string detail;
    if (!fromJson(line.value("episode", json()), trajectory.episode, &detail)) {
        error = "episode: " + detail;
        return std::nullopt;
    }
    const json events = line.value("events", json::array());
    if (!events.is_array()) {
        error = "\"events\" must be an array";
        return std::nullopt;
    }
    std::int64_t lastSequence = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        EpisodeEvent event;
        if (!fromJson(events[i], event, &detail)) {
            error = "event " + std::to_string(i + 1) + ": " + detail;
            return std::nullopt;
        }
        if (event.sequence <= lastSequence) {
            error = "event " + std::to_string(i + 1) + ": sequence " +
                    std::to_string(event.sequence) + " does not follow " +
                    std::to_string(lastSequence) + " (sequence numbers increase from 1)";
            return std::nullopt;
        }
        if (event.kind == EventKind::FileDiff) {
            // A fork writes these paths into a workspace: they must stay inside it.
            const json path =
                event.payload.is_object() ? event.payload.value("path", json()) : json();
            const std::string problem = path.is_string()
                                            ? fileDiffPathProblem(path.get<std::string>())
                                            : std::string("file_diff without a \"path\"");
            if (!problem.empty()) {
                error = "event " + std::to_string(i + 1) + ": " + problem;
                return std::nullopt;
            }
        }
        lastSequence = event.sequence;
        event.episodeId = trajectory.episode.id;
        trajectory.events.push_back(std::move(event));
    }
    return trajectory;
}

} // namespace

json toExportLine(const EpisodeTrajectory& trajectory) {
    json events = json::array();
    for (const EpisodeEvent& event : trajectory.events)
        events.push_back(toJson(event));
    return {{"format", std::string(kEpisodeExportFormat)},
            {"format_version", kEpisodeExportVersion},
            {"episode", toJson(trajectory.episode)},
            {"events", std::move(events)}};
}

void writeExportLine(const json& line, std::ostream& out) {
    // The format first, so a file manager's content sniffing (and `head -c`) names the file
    // from its first bytes; json objects otherwise print their keys sorted.
    const auto text = [](const json& value) {
        return value.dump(-1, ' ', false, json::error_handler_t::replace);
    };
    out << '{';
    bool first = true;
    for (const char* key : {"format", "format_version"})
        if (const auto found = line.find(key); found != line.end()) {
            out << (first ? "" : ",") << json(key).dump() << ':' << text(*found);
            first = false;
        }
    for (const auto& [key, value] : line.items())
        if (key != "format" && key != "format_version") {
            out << (first ? "" : ",") << text(json(key)) << ':' << text(value);
            first = false;
        }
    out << "}\n";
}

StoreResult<std::size_t> exportEpisodes(const TrajectoryStore& store,
                                        const std::vector<EpisodeId>& ids, std::ostream& out) {
    std::size_t written = 0;
    for (EpisodeId id : ids) {
        auto trajectory = store.loadTrajectory(id);
        if (!trajectory)
            return StoreError{"cannot export: " + trajectory.error().message};
        writeExportLine(store.scrubJson(toExportLine(trajectory.value())), out);
        if (!out)
            return StoreError{"cannot export: writing failed after " + std::to_string(written) +
                              " episodes"};
        ++written;
    }
    out.flush();
    return written;
}

StoreResult<std::size_t> exportEpisodes(const TrajectoryStore& store,
                                        const std::vector<EpisodeId>& ids,
                                        const std::filesystem::path& file) {
    std::filesystem::path partial = file;
    partial += ".partial";
    StoreResult<std::size_t> result = std::size_t{0};
    {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        if (!out)
            return StoreError{"cannot write " + partial.string() + ": " + std::strerror(errno)};
        result = exportEpisodes(store, ids, out);
        out.close();
        if (result && !out)
            result = StoreError{"cannot write " + partial.string() + ": " + std::strerror(errno)};
    }
    std::error_code ec;
    if (!result) {
        std::filesystem::remove(partial, ec);
        return result;
    }
    std::filesystem::rename(partial, file, ec);
    if (ec) {
        std::filesystem::remove(partial, ec);
        return StoreError{"cannot write " + file.string() + ": " + ec.message()};
    }
    return result;
}

StoreResult<std::vector<EpisodeTrajectory>> readEpisodeLines(std::istream& in) {
    std::vector<EpisodeTrajectory> trajectories;
    std::string text;
    for (std::size_t line = 1; std::getline(in, text); ++line) {
        if (isBlank(text))
            continue;
        std::string error;
        auto trajectory = parseLine(text, error);
        if (!trajectory)
            return lineError(line, error);
        trajectories.push_back(std::move(*trajectory));
    }
    if (in.bad())
        return StoreError{"reading the episodes failed"};
    return trajectories;
}

StoreResult<std::vector<EpisodeRecord>> importEpisodes(TrajectoryStore& store, std::istream& in,
                                                       ImportIds ids) {
    auto trajectories = readEpisodeLines(in);
    if (!trajectories)
        return StoreError{"cannot import: " + trajectories.error().message};
    return store.insertTrajectories(trajectories.value(), ids);
}

StoreResult<std::vector<EpisodeRecord>>
importEpisodes(TrajectoryStore& store, const std::filesystem::path& file, ImportIds ids) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return StoreError{"cannot read " + file.string() + ": " + std::strerror(errno)};
    auto trajectories = readEpisodeLines(in);
    if (!trajectories)
        return StoreError{"cannot import " + file.string() + ": " + trajectories.error().message};
    return store.insertTrajectories(trajectories.value(), ids);
}

} // namespace kwb::agent
