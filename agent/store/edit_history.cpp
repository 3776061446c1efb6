#include "agent/store/edit_history.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
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
    return EditHistoryReader(file, workspace).read();
}

EditHistoryReader::EditHistoryReader(std::string file, std::string workspace)
    : file_(std::move(file)), owner_(absoluteWorkspace(workspace)) {
    restart();
}

void EditHistoryReader::restart() {
    history_ = EditHistory();
    EpisodeRecord& record = history_.trajectory.episode;
    record.id = kEditHistoryEpisodeId;
    record.task = (fs::path(owner_) / "model.py").generic_string();
    record.provider = kEditHistoryProvider;
    record.status = EpisodeStatus::Running;
    record.settings = {{"workspace", owner_}};
    previous_.clear();
    consumed_ = 0;
    device_ = inode_ = 0;
}

EditHistory EditHistoryReader::read() {
    struct stat info {};
    if (::stat(file_.c_str(), &info) != 0) {
        restart(); // no history (yet, or any more)
        return history_;
    }
    const auto size = static_cast<std::uint64_t>(info.st_size);
    if (size > kMaxHistoryBytes || !S_ISREG(info.st_mode)) {
        restart();
        history_.error =
            file_ + (S_ISREG(info.st_mode) ? " is over " + std::to_string(kMaxHistoryBytes >> 20) +
                                                 " MiB; it is not a hand-edit history"
                                           : " is not a file");
        return history_;
    }
    // Another file in its place, or this one cut shorter: what was consumed is not its start.
    if (static_cast<std::uint64_t>(info.st_dev) != device_ ||
        static_cast<std::uint64_t>(info.st_ino) != inode_ || size < consumed_) {
        restart();
        device_ = static_cast<std::uint64_t>(info.st_dev);
        inode_ = static_cast<std::uint64_t>(info.st_ino);
    }
    history_.error.clear();
    std::ifstream in(file_, std::ios::binary);
    if (!in) {
        EditHistory failed = history_;
        failed.error = "cannot open " + file_;
        return failed;
    }
    in.seekg(static_cast<std::streamoff>(consumed_));
    int tornTail = 0;
    for (std::string text; std::getline(in, text);) {
        if (in.eof()) { // no newline after it: torn, or still being written
            tornTail = text.empty() ? 0 : 1;
            break;
        }
        consumed_ += text.size() + 1;
        if (!text.empty())
            takeLine(text);
    }
    history_.trajectory.episode.lastSequence =
        static_cast<std::int64_t>(history_.trajectory.events.size());
    EditHistory out = history_;
    out.skippedLines += tornTail;
    return out;
}

void EditHistoryReader::takeLine(const std::string& text) {
    std::vector<EpisodeEvent>& events = history_.trajectory.events;
    auto append = [&](EventKind kind, json payload, const std::string& time) {
        EpisodeEvent event;
        event.episodeId = kEditHistoryEpisodeId;
        event.sequence = static_cast<std::int64_t>(events.size()) + 1;
        event.timestamp = time;
        event.kind = kind;
        event.payload = std::move(payload);
        events.push_back(std::move(event));
    };
    const json line = json::parse(text, nullptr, false);
    WorkspaceFiles files;
    if (line.is_discarded() || !line.is_object() ||
        line.value("workspace", std::string()) != owner_ || !readFiles(line, files) ||
        !line.contains("evaluation") || !line["evaluation"].is_object()) {
        ++history_.skippedLines;
        return;
    }
    const std::string time = line.value("time", std::string());
    const bool first = history_.evaluations == 0;
    if (first)
        history_.trajectory.episode.startedAt = time;
    for (const auto& [path, after] : files) {
        const auto before = previous_.find(path);
        if (before != previous_.end() && before->second == after)
            continue;
        const std::optional<std::string> old =
            before == previous_.end() ? std::nullopt : std::optional(before->second);
        json payload = {{"path", path},
                        {"tool", kEditHistoryProvider},
                        {"before", optionalText(old)},
                        {"after", after},
                        {"diff", first ? std::string() : diffFileTexts(path, old, after).text}};
        if (first)
            payload["initial"] = true;
        append(EventKind::FileDiff, std::move(payload), time);
    }
    for (const auto& [path, before] : previous_)
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
    previous_ = std::move(files);
    ++history_.evaluations;
}

} // namespace kwb::agent
