#include "agent/store/edit_history.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace kwb::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kFormatVersion = 1;
// A history is kilobytes per evaluation; anything this large is not one of ours.
constexpr std::uintmax_t kMaxHistoryBytes = std::uintmax_t(512) << 20;

std::string absoluteWorkspace(const std::string& workspace) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(workspace, ec);
    fs::path normal = (ec ? fs::path(workspace) : absolute).lexically_normal();
    if (!normal.has_filename() && normal.has_parent_path()) // "ws/" and "ws/." are "ws"
        normal = normal.parent_path();
    return normal.generic_string();
}

// FNV-1a, 64 bits: a stable file name, not a security boundary (the line's own "workspace"
// field decides whose line it is).
std::string hashName(const std::string& text) {
    std::uint64_t hash = 14695981039346656037ull;
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    static const char* digits = "0123456789abcdef";
    std::string name(16, '0');
    for (int i = 15; i >= 0; --i, hash >>= 4)
        name[static_cast<std::size_t>(i)] = digits[hash & 0xF];
    return name;
}

json optionalText(const std::optional<std::string>& text) {
    return text ? json(*text) : json(nullptr);
}

bool readFiles(const json& line, WorkspaceFiles& files) {
    const auto found = line.find("files");
    if (found == line.end() || !found->is_object())
        return false;
    for (const auto& [path, text] : found->items()) {
        if (!text.is_string())
            return false;
        files[path] = text.get<std::string>();
    }
    return true;
}

} // namespace

std::string editHistoryFile(const std::string& historyFolder, const std::string& workspace) {
    return (fs::path(historyFolder) / (hashName(absoluteWorkspace(workspace)) + ".jsonl")).string();
}

bool appendEditHistory(const std::string& file, const std::string& workspace,
                       const WorkspaceFiles& files, const json& evaluation,
                       const std::string& timestamp, std::string* error) {
    auto fail = [&](const std::string& why) {
        if (error)
            *error = why;
        return false;
    };
    std::error_code ec;
    const fs::path path(file);
    if (path.has_parent_path())
        fs::create_directories(path.parent_path(), ec);
    json line = {{"version", kFormatVersion},
                 {"workspace", absoluteWorkspace(workspace)},
                 {"time", timestamp},
                 {"files", json::object()},
                 {"evaluation", evaluation}};
    for (const auto& [relative, text] : files)
        line["files"][relative] = text;
    // Replacement characters instead of an exception for a file that is not UTF-8.
    std::string bytes = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail("cannot open " + file + ": " + std::strerror(errno));
    // A crash mid-write left a torn line without its newline: end it first, so this line is
    // read on its own and only the torn one is lost.
    const off_t size = ::lseek(fd, 0, SEEK_END);
    char last = '\n';
    if (size > 0 && ::pread(fd, &last, 1, size - 1) == 1 && last != '\n')
        bytes.insert(bytes.begin(), '\n');
    // One write of the whole line: with O_APPEND it lands after every earlier line.
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    const int writeErrno = errno;
    ::close(fd);
    if (written != static_cast<ssize_t>(bytes.size()))
        return fail("cannot write " + file + ": " +
                    (written < 0 ? std::strerror(writeErrno) : std::string("short write")));
    return true;
}

EditHistory readEditHistory(const std::string& file, const std::string& workspace) {
    EditHistory out;
    const std::string owner = absoluteWorkspace(workspace);
    EpisodeRecord& record = out.trajectory.episode;
    record.id = kEditHistoryEpisodeId;
    record.task = (fs::path(owner) / "model.py").generic_string();
    record.provider = kEditHistoryProvider;
    record.status = EpisodeStatus::Running;
    record.settings = {{"workspace", owner}};

    std::error_code ec;
    if (!fs::exists(file, ec))
        return out;
    const std::uintmax_t size = fs::file_size(file, ec);
    if (ec || size > kMaxHistoryBytes) {
        out.error = ec ? "cannot read " + file + ": " + ec.message()
                       : file + " is over " + std::to_string(kMaxHistoryBytes >> 20) +
                             " MiB; it is not a hand-edit history";
        return out;
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        out.error = "cannot open " + file;
        return out;
    }
    std::vector<EpisodeEvent>& events = out.trajectory.events;
    auto append = [&](EventKind kind, json payload, const std::string& time) {
        EpisodeEvent event;
        event.episodeId = kEditHistoryEpisodeId;
        event.sequence = static_cast<std::int64_t>(events.size()) + 1;
        event.timestamp = time;
        event.kind = kind;
        event.payload = std::move(payload);
        events.push_back(std::move(event));
    };
    WorkspaceFiles previous;
    for (std::string text; std::getline(in, text);) {
        if (text.empty())
            continue;
        const json line = json::parse(text, nullptr, false);
        WorkspaceFiles files;
        if (line.is_discarded() || !line.is_object() ||
            line.value("workspace", std::string()) != owner || !readFiles(line, files) ||
            !line.contains("evaluation") || !line["evaluation"].is_object()) {
            ++out.skippedLines;
            continue;
        }
        const std::string time = line.value("time", std::string());
        const bool first = out.evaluations == 0;
        if (first)
            record.startedAt = time;
        for (const auto& [path, after] : files) {
            const auto before = previous.find(path);
            if (before != previous.end() && before->second == after)
                continue;
            const std::optional<std::string> old =
                before == previous.end() ? std::nullopt : std::optional(before->second);
            json payload = {{"path", path},
                            {"tool", kEditHistoryProvider},
                            {"before", optionalText(old)},
                            {"after", after},
                            {"diff", first ? std::string() : diffFileTexts(path, old, after).text}};
            if (first)
                payload["initial"] = true;
            append(EventKind::FileDiff, std::move(payload), time);
        }
        for (const auto& [path, before] : previous)
            if (!files.count(path))
                append(EventKind::FileDiff,
                       {{"path", path},
                        {"tool", kEditHistoryProvider},
                        {"before", before},
                        {"after", nullptr},
                        {"diff", diffFileTexts(path, before, std::nullopt).text}},
                       time);
        json evaluation = line["evaluation"];
        evaluation["trigger"] = "hand edit";
        append(EventKind::Evaluation, std::move(evaluation), time);
        previous = std::move(files);
        ++out.evaluations;
    }
    record.lastSequence = static_cast<std::int64_t>(events.size());
    return out;
}

} // namespace kwb::agent
