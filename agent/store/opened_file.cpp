#include "agent/store/opened_file.h"

#include "agent/store/episode_export.h"
#include "engine/timeline/trace_file.h"
#include "engine/workspace/workspace.h"

#include <filesystem>
#include <fstream>
#include <string_view>

namespace fs = std::filesystem;

namespace kwb::agent {
namespace {

// Enough for a trace's header line and an export's leading format field.
constexpr std::size_t kHeadBytes = 4096;

std::string_view withoutLeadingSpace(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    return first == std::string_view::npos ? std::string_view() : text.substr(first);
}

bool looksLikeEpisodeExport(std::string_view head) {
    const std::string_view text = withoutLeadingSpace(head);
    std::string format = R"({"format":")";
    format.append(kEpisodeExportFormat).push_back('"');
    // Exports before the format led their lines began with the sorted keys: the episode first.
    const std::string_view sortedStart = R"({"episode":{)";
    return text.substr(0, format.size()) == format ||
           text.substr(0, sortedStart.size()) == sortedStart;
}

} // namespace

OpenedFile classifyOpenedFile(const std::string& path) {
    OpenedFile out;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
        out.why = path + " does not exist";
        return out;
    }
    if (fs::is_directory(status)) {
        if (kwb::isWorkspace(path))
            out.kind = OpenedFileKind::Workspace;
        else
            out.why =
                path + " is a folder but not a workspace (it needs model.py and model_new.py)";
        return out;
    }
    if (fs::path(path).extension() == ".py") {
        out.kind = OpenedFileKind::Task;
        return out;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        out.why = "cannot read " + path;
        return out;
    }
    std::string head(kHeadBytes, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    if (looksLikeEpisodeExport(head)) {
        out.kind = OpenedFileKind::Episodes;
        return out;
    }
    std::string why;
    if (timeline::detectTraceFormat(head, &why) != timeline::TraceFormat::Unknown) {
        out.kind = OpenedFileKind::Trace;
        return out;
    }
    out.why = fs::path(path).filename().string() +
              " is not a task (.py), a workspace folder, a trace or exported episodes: " + why;
    return out;
}

} // namespace kwb::agent
