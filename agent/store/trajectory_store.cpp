#include "agent/store/trajectory_store.h"

#include "agent/llm/api_key.h"
#include "agent/store/sqlite_database.h"
#include "engine/system/bounded_json.h"
#include "engine/system/exclusive_file_lock.h"
#include "engine/system/user_directories.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <unistd.h>

using nlohmann::json;

namespace kwb::agent {

namespace {

// "KWBT" in the file header, so another application's SQLite file is never taken for ours.
constexpr std::int64_t kApplicationId = 0x4B574254;

// Step i takes the schema from version i to i + 1. A new version appends a step; released
// steps are never edited, because files at every older version must still migrate.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE episodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused, so a stale id cannot name a new episode
    parent_id INTEGER REFERENCES episodes(id) ON DELETE SET NULL,
    fork_sequence INTEGER,
    task TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    settings TEXT NOT NULL,
    status TEXT NOT NULL,
    reward REAL,
    final_evaluation TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    wall_seconds REAL NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cached_input_tokens INTEGER,
    cost_usd REAL NOT NULL,
    turns INTEGER NOT NULL,
    last_sequence INTEGER NOT NULL
);
CREATE INDEX episodes_by_start ON episodes(started_at, id);
CREATE INDEX episodes_by_task ON episodes(task, started_at);
CREATE INDEX episodes_by_status ON episodes(status, started_at);
CREATE INDEX episodes_by_parent ON episodes(parent_id);
CREATE TABLE events (
    episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    sequence INTEGER NOT NULL,
    timestamp TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (episode_id, sequence)
); -- a rowid table: payloads (tool output) are often larger than WITHOUT ROWID suits
)sql",
    // 1 -> 2: why an episode ended, and which process runs it (to close the ones it left).
    R"sql(
ALTER TABLE episodes ADD COLUMN end_cause TEXT NOT NULL DEFAULT '';
ALTER TABLE episodes ADD COLUMN owner TEXT NOT NULL DEFAULT '';
)sql",
    // 2 -> 3: rollout runs. A run's episodes name it in their settings ("run_id"), written when
    // the episode is created, so no crash can leave an episode of a run unlinked.
    R"sql(
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    task_set TEXT NOT NULL,
    task_set_hash TEXT NOT NULL,
    settings TEXT NOT NULL,
    status TEXT NOT NULL
);
)sql",
    // 3 -> 4: the training values of a run's scored episodes, computed by the rollout as each
    // task's group fills (GRPO's group-normalised advantage, PPO's returns and GAE per turn), so
    // exports and trainers read what the run decided rather than recomputing it.
    R"sql(
CREATE TABLE episode_advantages (
    episode_id INTEGER PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL,
    task TEXT NOT NULL,
    group_size INTEGER NOT NULL,
    group_complete INTEGER NOT NULL,
    reward REAL NOT NULL,
    advantage REAL NOT NULL,
    turn_returns TEXT NOT NULL,
    turn_gae_advantages TEXT NOT NULL,
    computed_at TEXT NOT NULL
);
CREATE INDEX episode_advantages_by_run ON episode_advantages(run_id);
)sql",
};
static_assert(std::size(kMigrations) == TrajectoryStore::kSchemaVersion);

constexpr const char* kEpisodeColumns =
    "id, parent_id, fork_sequence, task, provider, model, settings, status, reward, "
    "final_evaluation, started_at, finished_at, wall_seconds, input_tokens, output_tokens, "
    "cached_input_tokens, cost_usd, turns, last_sequence, end_cause, owner";

// A request the store turns down (no such episode, a bad fork step, a foreign file): reported
// like a database error, as a StoreError.
class Refusal : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// ISO 8601 UTC with milliseconds: events of one turn often share a second, and the timeline
// orders and spaces them by this.
std::string timestampNow() {
    const auto now = std::chrono::system_clock::now();
    const auto sinceEpoch =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch());
    const std::time_t seconds = static_cast<std::time_t>(sinceEpoch.count() / 1000);
    std::tm utc{};
    gmtime_r(&seconds, &utc); // not std::gmtime: stores write from several threads
    char buffer[96]; // room for any int the fields could hold, so the format cannot truncate
    std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                  static_cast<int>(sinceEpoch.count() % 1000));
    return buffer;
}

std::string episodeName(EpisodeId id) {
    return "episode " + std::to_string(id);
}

StoreUpdate episodeChanged(const EpisodeRecord& record) {
    StoreUpdate update;
    update.kind = StoreUpdate::Kind::EpisodeChanged;
    update.episodeId = record.id;
    update.episode = record;
    return update;
}

} // namespace

struct TrajectoryStore::Impl {
    Impl(std::string path, TrajectoryStoreOptions options)
        : path(std::move(path)), options(std::move(options)), db(this->path, /*create=*/true) {
        for (const std::string& secret : this->options.secrets)
            if (!secret.empty())
                secrets.push_back(secret);
    }

    std::string path;
    TrajectoryStoreOptions options;
    std::vector<std::string> secrets; // the non-empty ones

    mutable std::mutex mutex; // guards db and staged
    mutable sqlite::Database db;
    std::vector<StoreUpdate> staged; // this transaction's updates, published once it commits
    UpdateBroadcaster broadcaster;

    std::string scrubText(std::string_view text) const {
        return secrets.empty() ? std::string(text) : redactSecrets(text, secrets);
    }

    json scrubJson(const json& value) const {
        if (secrets.empty())
            return value;
        if (value.is_string())
            return scrubText(value.get_ref<const std::string&>());
        if (value.is_array()) {
            json out = json::array();
            for (const json& item : value)
                out.push_back(scrubJson(item));
            return out;
        }
        if (value.is_object()) {
            json out = json::object();
            for (auto it = value.begin(); it != value.end(); ++it)
                out[scrubText(it.key())] = scrubJson(it.value());
            return out;
        }
        return value;
    }

    // Invalid UTF-8 (a tool printing binary) is replaced rather than failing the write.
    std::string dump(const json& value) const {
        return scrubJson(value).dump(-1, ' ', false, json::error_handler_t::replace);
    }

    static json parseStored(const std::string& text, std::string_view what) {
        json value = parseBoundedJson(text);
        if (value.is_discarded())
            throw Refusal("the stored " + std::string(what) + " is not valid JSON");
        return value;
    }

    // Runs `body` under the store's lock; turns every exception into a StoreError and, once
    // the lock is released, delivers what the body committed to subscribers.
    template <typename Body>
    auto call(const std::string& context, Body&& body) -> StoreResult<std::invoke_result_t<Body>> {
        using T = std::invoke_result_t<Body>;
        std::optional<StoreResult<T>> result;
        {
            std::lock_guard lock(mutex);
            staged.clear();
            try {
                if constexpr (std::is_void_v<T>) {
                    body();
                    result.emplace();
                } else {
                    result.emplace(body());
                }
                broadcaster.publish(std::move(staged));
            } catch (const std::exception& error) {
                result.emplace(StoreError{scrubText(context + ": " + error.what())});
            } catch (...) {
                result.emplace(StoreError{context + ": unexpected error"});
            }
            staged.clear();
        }
        broadcaster.deliver();
        return std::move(*result);
    }

    // One transaction, repeated while another connection keeps the file locked past the busy
    // timeout's wait (SQLite returns SQLITE_BUSY at once in a few cases, e.g. WAL recovery).
    template <typename Body>
    auto transact(sqlite::Transaction::Mode mode, Body&& body) -> std::invoke_result_t<Body> {
        const auto deadline = std::chrono::steady_clock::now() + options.busyTimeout;
        std::chrono::milliseconds pause{1};
        for (;;) {
            staged.clear();
            try {
                sqlite::Transaction transaction(db, mode);
                if constexpr (std::is_void_v<std::invoke_result_t<Body>>) {
                    body();
                    transaction.commit();
                    return;
                } else {
                    auto value = body();
                    transaction.commit();
                    return value;
                }
            } catch (const sqlite::Error& error) {
                if (!error.busy() || std::chrono::steady_clock::now() >= deadline)
                    throw;
            }
            std::this_thread::sleep_for(pause);
            pause = std::min(pause * 2, std::chrono::milliseconds(100));
        }
    }

    template <typename Body>
    auto write(Body&& body) {
        return transact(sqlite::Transaction::Mode::Write, std::forward<Body>(body));
    }

    template <typename Body>
    auto read(Body&& body) {
        return transact(sqlite::Transaction::Mode::Read, std::forward<Body>(body));
    }

    void prepareFile() {
        db.setBusyTimeout(options.busyTimeout);
        // Reading the header first: a file that is not a database fails here, before anything
        // could be written to it.
        const std::int64_t applicationId = db.pragmaInteger("application_id");
        if (applicationId != 0 && applicationId != kApplicationId)
            throw Refusal("it is another application's SQLite file");
        checkVersion(db.pragmaInteger("user_version"));
        if (applicationId == 0 && db.pragmaInteger("user_version") == 0 && hasTables())
            throw Refusal("it is an SQLite database, but not a trajectory store");

        if (path != ":memory:") {
            // Readers never block the writer and the writer never blocks readers. Where the
            // file system cannot do WAL (some network mounts) the mode stays as it was and
            // writers simply wait for each other.
            sqlite::Query journal = db.query("PRAGMA journal_mode = WAL");
            while (journal.step()) {
            }
        }
        db.exec("PRAGMA foreign_keys = ON");
        // In WAL mode this cannot corrupt the file; a power cut may lose the last commits.
        db.exec("PRAGMA synchronous = NORMAL");

        if (db.pragmaInteger("user_version") < kSchemaVersion)
            write([&] { migrate(); });
    }

    static void checkVersion(std::int64_t version) {
        if (version > kSchemaVersion)
            throw Refusal("it was written by a newer Kernel Workbench (schema version " +
                          std::to_string(version) + "; this one reads up to " +
                          std::to_string(kSchemaVersion) + ")");
    }

    bool hasTables() {
        sqlite::Query tables = db.query("SELECT count(*) FROM sqlite_master");
        return tables.step() && tables.integer(0) > 0;
    }

    void migrate() {
        // Read again inside the write lock: another process may have migrated meanwhile.
        std::int64_t version = db.pragmaInteger("user_version");
        checkVersion(version);
        for (; version < kSchemaVersion; ++version)
            db.exec(kMigrations[version]);
        db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
        db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
    }

    EpisodeRecord readEpisode(const sqlite::Query& row) const {
        EpisodeRecord r;
        r.id = row.integer(0);
        r.parentId = row.optionalInteger(1);
        r.forkSequence = row.optionalInteger(2);
        r.task = row.text(3);
        r.provider = row.text(4);
        r.model = row.text(5);
        r.settings = parseStored(row.text(6), "settings of " + episodeName(r.id));
        const auto status = parseEpisodeStatus(row.text(7));
        if (!status)
            throw Refusal("the stored status of " + episodeName(r.id) + " is unknown");
        r.status = *status;
        r.reward = row.optionalReal(8);
        if (!row.isNull(9))
            r.finalEvaluation = parseStored(row.text(9), "evaluation of " + episodeName(r.id));
        r.startedAt = row.text(10);
        r.finishedAt = row.text(11);
        r.wallSeconds = row.real(12);
        r.usage.inputTokens = row.integer(13);
        r.usage.outputTokens = row.integer(14);
        r.usage.cachedInputTokens = row.optionalInteger(15);
        r.costUsd = row.real(16);
        r.turns = static_cast<int>(row.integer(17));
        r.lastSequence = row.integer(18);
        r.endCause = row.text(19);
        r.owner = row.text(20);
        return r;
    }

    std::optional<EpisodeRecord> findEpisode(EpisodeId id) const {
        sqlite::Query query =
            db.query(std::string("SELECT ") + kEpisodeColumns + " FROM episodes WHERE id = ?1");
        query.bind(1, id);
        if (!query.step())
            return std::nullopt;
        return readEpisode(query);
    }

    EpisodeRecord episode(EpisodeId id) const {
        if (auto record = findEpisode(id))
            return *record;
        throw Refusal("there is no such episode");
    }

    EpisodeEvent readEvent(const sqlite::Query& row) const {
        EpisodeEvent e;
        e.episodeId = row.integer(0);
        e.sequence = row.integer(1);
        e.timestamp = row.text(2);
        const auto kind = parseEventKind(row.text(3));
        if (!kind)
            throw Refusal("event " + std::to_string(e.sequence) + " has an unknown kind");
        e.kind = *kind;
        e.payload = parseStored(row.text(4), "payload of event " + std::to_string(e.sequence));
        return e;
    }

    std::vector<EpisodeEvent> events(EpisodeId id, std::int64_t fromSequence) const {
        sqlite::Query query =
            db.query("SELECT episode_id, sequence, timestamp, kind, payload FROM events "
                     "WHERE episode_id = ?1 AND sequence >= ?2 ORDER BY sequence");
        query.bind(1, id).bind(2, fromSequence);
        std::vector<EpisodeEvent> out;
        while (query.step())
            out.push_back(readEvent(query));
        return out;
    }

    // Inserts the row with the given id (none: the next free one), and returns the id.
    EpisodeId insertEpisode(const EpisodeRecord& r, std::optional<EpisodeId> id, int turns,
                            std::int64_t lastSequence) {
        sqlite::Query insert = db.query(
            "INSERT INTO episodes (id, parent_id, fork_sequence, task, provider, model, settings, "
            "status, reward, final_evaluation, started_at, finished_at, wall_seconds, "
            "input_tokens, output_tokens, cached_input_tokens, cost_usd, turns, last_sequence, "
            "end_cause, owner) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
            "?18, ?19, ?20, ?21)");
        insert.bind(1, id).bind(2, r.parentId).bind(3, r.forkSequence);
        insert.bind(4, scrubText(r.task))
            .bind(5, scrubText(r.provider))
            .bind(6, scrubText(r.model));
        insert.bind(7, dump(r.settings)).bind(8, episodeStatusName(r.status)).bind(9, r.reward);
        bindEvaluation(insert, 10, r.finalEvaluation);
        insert.bind(11, r.startedAt.empty() ? timestampNow() : scrubText(r.startedAt));
        bindFinishedAt(insert, 12, r.finishedAt);
        insert.bind(13, r.wallSeconds);
        insert.bind(14, r.usage.inputTokens).bind(15, r.usage.outputTokens);
        insert.bind(16, r.usage.cachedInputTokens).bind(17, r.costUsd);
        insert.bind(18, turns).bind(19, lastSequence);
        insert.bind(20, scrubText(r.endCause)).bind(21, scrubText(r.owner));
        insert.run();
        return db.lastInsertId();
    }

    void bindEvaluation(sqlite::Query& query, int index, const json& evaluation) const {
        if (evaluation.is_null())
            query.bindNull(index);
        else
            query.bind(index, dump(evaluation));
    }

    void bindFinishedAt(sqlite::Query& query, int index, const std::string& finishedAt) const {
        if (finishedAt.empty())
            query.bindNull(index);
        else
            query.bind(index, scrubText(finishedAt));
    }

    void insertEvent(const EpisodeEvent& event) {
        sqlite::Query insert =
            db.query("INSERT INTO events (episode_id, sequence, timestamp, kind, payload) "
                     "VALUES (?1, ?2, ?3, ?4, ?5)");
        insert.bind(1, event.episodeId).bind(2, event.sequence).bind(3, scrubText(event.timestamp));
        insert.bind(4, eventKindName(event.kind)).bind(5, dump(event.payload));
        insert.run();
    }

    EpisodeEvent append(EpisodeId id, EventKind kind, const json& payload) {
        sqlite::Query next = db.query("UPDATE episodes SET last_sequence = last_sequence + 1, "
                                      "turns = turns + ?2 WHERE id = ?1 RETURNING last_sequence");
        next.bind(1, id).bind(2, kind == EventKind::AssistantMessage ? 1 : 0);
        if (!next.step())
            throw Refusal("there is no such episode");
        EpisodeEvent event{id, next.integer(0), timestampNow(), kind, scrubJson(payload)};
        next.run();
        insertEvent(event);
        StoreUpdate update;
        update.kind = StoreUpdate::Kind::EventAppended;
        update.episodeId = id;
        update.event = event;
        staged.push_back(std::move(update));
        return event;
    }

    void appendStatusChange(EpisodeId id, EpisodeStatus from, EpisodeStatus to, json extra) {
        json payload = {{"status", episodeStatusName(to)}, {"previous", episodeStatusName(from)}};
        payload.update(extra);
        append(id, EventKind::Status, payload);
    }

    EpisodeRecord publishEpisode(EpisodeId id) {
        EpisodeRecord stored = episode(id);
        staged.push_back(episodeChanged(stored));
        return stored;
    }

    int assistantTurnsUpTo(EpisodeId id, std::int64_t sequence) const {
        sqlite::Query count = db.query("SELECT count(*) FROM events WHERE episode_id = ?1 AND "
                                       "sequence <= ?2 AND kind = 'assistant_message'");
        count.bind(1, id).bind(2, sequence);
        return count.step() ? static_cast<int>(count.integer(0)) : 0;
    }
};

TrajectoryStore::TrajectoryStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

TrajectoryStore::~TrajectoryStore() = default;

std::string TrajectoryStore::defaultPath() {
    return (std::filesystem::path(stateDirectory()) / "trajectories.db").string();
}

StoreResult<std::unique_ptr<TrajectoryStore>>
TrajectoryStore::open(const std::string& path, TrajectoryStoreOptions options) {
    const std::string context = "cannot open the trajectory store " + path;
    if (path.empty())
        return StoreError{context + ": no file given (a path, or :memory:)"};
    try {
        auto impl = std::make_unique<Impl>(path, std::move(options));
        // Opening races with other processes creating or migrating the same file.
        const auto deadline = std::chrono::steady_clock::now() + impl->options.busyTimeout;
        for (;;) {
            try {
                impl->prepareFile();
                break;
            } catch (const sqlite::Error& error) {
                if (!error.busy() || std::chrono::steady_clock::now() >= deadline)
                    throw;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return std::unique_ptr<TrajectoryStore>(new TrajectoryStore(std::move(impl)));
    } catch (const std::exception& error) {
        return StoreError{context + ": " + error.what()};
    }
}

const std::string& TrajectoryStore::path() const {
    return impl_->path;
}

namespace {

std::string thisHost() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    return std::string(host) + ":";
}

// Liveness that needs no shared hostname or pid namespace: every process that runs episodes of a
// store holds an flock on "<store>.owners/<owner>.lock" from before its first episode row until
// it dies, when the kernel drops the lock however it died. A process on another host (a
// container restarted under a new hostname, with the store on a volume) or whose pid was reused
// is then told apart from a live one by trying the lock. Stores written before these files
// existed, and files that cannot be opened, fall back to the host-and-pid check.
std::string ownerLockPath(const std::string& storePath, const std::string& owner) {
    std::string name = owner;
    for (char& c : name)
        if (c == '/' || c == '\\' || c == '\0')
            c = '_';
    return storePath + ".owners/" + name + ".lock";
}

// This process's owner locks, one per store file, held until it exits.
std::mutex ownerLocksMutex;
std::map<std::string, ExclusiveFileLock>& ownerLocks() {
    static auto* locks = new std::map<std::string, ExclusiveFileLock>(); // never destroyed
    return *locks;
}

// Takes this process's owner lock of `storePath` once; false only when it cannot be taken (the
// episodes are then judged by host and pid alone, as before).
bool holdOwnerLock(const std::string& storePath, const std::string& owner) {
    if (storePath == ":memory:" || storePath.empty())
        return false;
    std::lock_guard lock(ownerLocksMutex);
    const std::string path = ownerLockPath(storePath, owner);
    if (ownerLocks().count(path))
        return true;
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    std::string error;
    auto held = ExclusiveFileLock::tryAcquire(path, &error);
    if (!held)
        return false;
    ownerLocks().emplace(path, std::move(*held));
    return true;
}

enum class OwnerLiveness { Alive, Dead, Unknown };

// What the owner's lock file says, when there is one.
OwnerLiveness ownerLiveness(const std::string& storePath, const std::string& owner) {
    if (storePath == ":memory:" || storePath.empty())
        return OwnerLiveness::Unknown;
    const std::string path = ownerLockPath(storePath, owner);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return OwnerLiveness::Unknown;
    std::string error;
    bool heldByOther = false;
    auto probe = ExclusiveFileLock::tryAcquire(path, &error, &heldByOther);
    if (probe) {
        // Nobody holds it: its owner is gone. The file goes; the probe's lock with it.
        std::filesystem::remove(path, ec);
        return OwnerLiveness::Dead;
    }
    return heldByOther ? OwnerLiveness::Alive : OwnerLiveness::Unknown;
}

} // namespace

std::string TrajectoryStore::thisProcess() {
    return thisHost() + std::to_string(::getpid());
}

StoreResult<std::vector<EpisodeRecord>> TrajectoryStore::closeAbandoned() {
    return impl_->call("cannot close abandoned episodes", [&] {
        return impl_->write([&] {
            const std::string me = thisProcess();
            const std::string host = thisHost();
            std::vector<EpisodeId> abandoned;
            sqlite::Query running = impl_->db.query(
                "SELECT id, owner FROM episodes WHERE status = 'running' AND owner != ''");
            while (running.step()) {
                const std::string owner = running.text(1);
                if (owner == me)
                    continue;
                const OwnerLiveness liveness = ownerLiveness(impl_->path, owner);
                if (liveness == OwnerLiveness::Dead) {
                    abandoned.push_back(running.integer(0));
                    continue;
                }
                // Without a lock file, only this host's processes can be checked; another
                // host's stay as they are.
                if (liveness == OwnerLiveness::Alive || owner.rfind(host, 0) != 0)
                    continue;
                const std::string pidText = owner.substr(host.size());
                char* end = nullptr;
                const long pid = std::strtol(pidText.c_str(), &end, 10);
                if (end == pidText.c_str() || *end != '\0' || pid <= 0 ||
                    (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH))
                    abandoned.push_back(running.integer(0));
            }
            std::vector<EpisodeRecord> closed;
            for (EpisodeId id : abandoned) {
                sqlite::Query close = impl_->db.query(
                    "UPDATE episodes SET status = 'infrastructure_error', end_cause = 'abandoned', "
                    "reward = NULL, finished_at = ?2 WHERE id = ?1");
                close.bind(1, id).bind(2, timestampNow());
                close.run();
                impl_->appendStatusChange(
                    id, EpisodeStatus::Running, EpisodeStatus::InfrastructureError,
                    {{"reward", nullptr},
                     {"cause", "abandoned"},
                     {"message", "the process that ran it ended without closing it"}});
                closed.push_back(impl_->publishEpisode(id));
            }
            return closed;
        });
    });
}

StoreResult<EpisodeRecord> TrajectoryStore::createEpisode(EpisodeRecord record) {
    if (record.startedAt.empty())
        record.startedAt = timestampNow();
    if (record.status == EpisodeStatus::Running && record.owner.empty())
        record.owner = thisProcess();
    // Before the row exists, so no running row of this process is ever without its lock.
    if (record.status == EpisodeStatus::Running && record.owner == thisProcess())
        holdOwnerLock(impl_->path, record.owner);
    return impl_->call("cannot create the episode", [&] {
        return impl_->write([&] {
            const EpisodeId id = impl_->insertEpisode(record, std::nullopt, 0, 0);
            return impl_->publishEpisode(id);
        });
    });
}

StoreResult<EpisodeEvent> TrajectoryStore::appendEvent(EpisodeId episode, EventKind kind,
                                                       json payload) {
    return impl_->call("cannot append an event to " + episodeName(episode), [&] {
        return impl_->write([&] { return impl_->append(episode, kind, payload); });
    });
}

StoreResult<EpisodeRecord> TrajectoryStore::updateEpisode(const EpisodeRecord& r) {
    return impl_->call("cannot update " + episodeName(r.id), [&] {
        return impl_->write([&] {
            const EpisodeRecord before = impl_->episode(r.id);
            sqlite::Query update = impl_->db.query(
                "UPDATE episodes SET task = ?2, provider = ?3, model = ?4, settings = ?5, "
                "status = ?6, reward = ?7, final_evaluation = ?8, finished_at = ?9, "
                "wall_seconds = ?10, input_tokens = ?11, output_tokens = ?12, "
                "cached_input_tokens = ?13, cost_usd = ?14 WHERE id = ?1");
            update.bind(1, r.id)
                .bind(2, impl_->scrubText(r.task))
                .bind(3, impl_->scrubText(r.provider));
            update.bind(4, impl_->scrubText(r.model)).bind(5, impl_->dump(r.settings));
            update.bind(6, episodeStatusName(r.status)).bind(7, r.reward);
            impl_->bindEvaluation(update, 8, r.finalEvaluation);
            impl_->bindFinishedAt(update, 9, r.finishedAt);
            update.bind(10, r.wallSeconds).bind(11, r.usage.inputTokens);
            update.bind(12, r.usage.outputTokens).bind(13, r.usage.cachedInputTokens);
            update.bind(14, r.costUsd);
            update.run();
            if (before.status != r.status)
                impl_->appendStatusChange(r.id, before.status, r.status, json::object());
            return impl_->publishEpisode(r.id);
        });
    });
}

StoreResult<EpisodeRecord> TrajectoryStore::finishEpisode(EpisodeId id, EpisodeOutcome outcome) {
    return impl_->call("cannot finish " + episodeName(id), [&] {
        if (outcome.status == EpisodeStatus::Running)
            throw Refusal("an episode ends finished, failed or stopped, not running");
        return impl_->write([&] {
            const EpisodeRecord before = impl_->episode(id);
            if (before.status != EpisodeStatus::Running)
                throw Refusal("it is already " + std::string(episodeStatusName(before.status)));
            // julianday() reads the store's own timestamps; a foreign one (from an import)
            // that it cannot read leaves the wall time as it was.
            sqlite::Query finish = impl_->db.query(
                "UPDATE episodes SET status = ?2, reward = ?3, final_evaluation = ?4, "
                "finished_at = ?5, wall_seconds = coalesce(max(0.0, round((julianday(?5) - "
                "julianday(started_at)) * 86400.0, 3)), wall_seconds), end_cause = ?6 "
                "WHERE id = ?1");
            finish.bind(1, id).bind(2, episodeStatusName(outcome.status)).bind(3, outcome.reward);
            impl_->bindEvaluation(finish, 4, outcome.finalEvaluation);
            finish.bind(5, timestampNow());
            finish.bind(6, scrubText(outcome.cause));
            finish.run();
            json extra = {{"reward", outcome.reward ? json(*outcome.reward) : json(nullptr)}};
            if (!outcome.cause.empty())
                extra["cause"] = outcome.cause;
            if (!outcome.message.empty())
                extra["message"] = outcome.message;
            impl_->appendStatusChange(id, before.status, outcome.status, std::move(extra));
            return impl_->publishEpisode(id);
        });
    });
}

StoreResult<EpisodeRecord> TrajectoryStore::forkEpisode(EpisodeId source,
                                                        std::int64_t upToSequence) {
    // The fork is a running row of this process, as createEpisode's are: its lock first.
    holdOwnerLock(impl_->path, thisProcess());
    return impl_->call("cannot fork " + episodeName(source), [&] {
        return impl_->write([&] {
            const EpisodeRecord parent = impl_->episode(source);
            if (upToSequence < 0 || upToSequence > parent.lastSequence)
                throw Refusal("it has steps 1.." + std::to_string(parent.lastSequence) +
                              ", so there is no step " + std::to_string(upToSequence));
            EpisodeRecord fork;
            fork.parentId = source;
            fork.forkSequence = upToSequence;
            fork.task = parent.task;
            fork.provider = parent.provider;
            fork.model = parent.model;
            fork.settings = parent.settings;
            const int turns = impl_->assistantTurnsUpTo(source, upToSequence);
            fork.owner = thisProcess();
            const EpisodeId id = impl_->insertEpisode(fork, std::nullopt, turns, upToSequence);
            sqlite::Query copy = impl_->db.query(
                "INSERT INTO events (episode_id, sequence, timestamp, kind, payload) "
                "SELECT ?1, sequence, timestamp, kind, payload FROM events "
                "WHERE episode_id = ?2 AND sequence <= ?3");
            copy.bind(1, id).bind(2, source).bind(3, upToSequence);
            copy.run();
            return impl_->publishEpisode(id);
        });
    });
}

StoreResult<void> TrajectoryStore::deleteEpisode(EpisodeId episode) {
    return impl_->call("cannot delete " + episodeName(episode), [&] {
        impl_->write([&] {
            sqlite::Query remove = impl_->db.query("DELETE FROM episodes WHERE id = ?1");
            remove.bind(1, episode);
            remove.run();
            if (impl_->db.changes() == 0)
                throw Refusal("there is no such episode");
            StoreUpdate update;
            update.kind = StoreUpdate::Kind::EpisodeDeleted;
            update.episodeId = episode;
            impl_->staged.push_back(std::move(update));
        });
    });
}

StoreResult<std::vector<EpisodeRecord>>
TrajectoryStore::listEpisodes(const EpisodeFilter& filter) const {
    return impl_->call("cannot list the episodes", [&] {
        return impl_->read([&] {
            std::vector<std::string> conditions;
            if (filter.task)
                conditions.push_back("task = ?2");
            if (filter.status)
                conditions.push_back("status = ?3");
            if (filter.runId)
                conditions.push_back("json_extract(settings, '$.run_id') = ?4");
            std::string sql = std::string("SELECT ") + kEpisodeColumns + " FROM episodes";
            for (std::size_t i = 0; i < conditions.size(); ++i)
                sql += (i == 0 ? " WHERE " : " AND ") + conditions[i];
            sql += " ORDER BY started_at DESC, id DESC LIMIT ?1";
            sqlite::Query query = impl_->db.query(sql);
            query.bind(1, filter.limit > 0 ? std::int64_t{filter.limit} : std::int64_t{-1});
            if (filter.task)
                query.bind(2, impl_->scrubText(*filter.task));
            if (filter.status)
                query.bind(3, episodeStatusName(*filter.status));
            if (filter.runId)
                query.bind(4, *filter.runId);
            std::vector<EpisodeRecord> out;
            while (query.step())
                out.push_back(impl_->readEpisode(query));
            return out;
        });
    });
}

namespace {

RunRecord readRun(const sqlite::Query& row) {
    RunRecord r;
    r.id = row.integer(0);
    r.createdAt = row.text(1);
    r.taskSet = row.text(2);
    r.taskSetHash = row.text(3);
    r.settings = parseBoundedJson(row.text(4));
    if (r.settings.is_discarded())
        r.settings = json::object();
    r.status = row.text(5);
    return r;
}

constexpr const char* kRunColumns = "id, created_at, task_set, task_set_hash, settings, status";

} // namespace

StoreResult<RunRecord> TrajectoryStore::createRun(RunRecord run) {
    return impl_->call("cannot record the run", [&] {
        return impl_->write([&] {
            run.createdAt = timestampNow();
            sqlite::Query insert =
                impl_->db.query("INSERT INTO runs (created_at, task_set, task_set_hash, settings, "
                                "status) VALUES (?1, ?2, ?3, ?4, ?5)");
            insert.bind(1, run.createdAt)
                .bind(2, impl_->scrubText(run.taskSet))
                .bind(3, run.taskSetHash)
                .bind(4, impl_->dump(run.settings))
                .bind(5, run.status);
            insert.run();
            sqlite::Query id = impl_->db.query("SELECT last_insert_rowid()");
            id.step();
            run.id = id.integer(0);
            return run;
        });
    });
}

StoreResult<RunRecord> TrajectoryStore::loadRun(RunId run) const {
    return impl_->call("cannot load run " + std::to_string(run), [&] {
        return impl_->read([&] {
            sqlite::Query query =
                impl_->db.query(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?1");
            query.bind(1, run);
            if (!query.step())
                throw Refusal("there is no such run");
            return readRun(query);
        });
    });
}

StoreResult<std::vector<RunRecord>> TrajectoryStore::listRuns() const {
    return impl_->call("cannot list the runs", [&] {
        return impl_->read([&] {
            sqlite::Query query = impl_->db.query(std::string("SELECT ") + kRunColumns +
                                                  " FROM runs ORDER BY id DESC");
            std::vector<RunRecord> out;
            while (query.step())
                out.push_back(readRun(query));
            return out;
        });
    });
}

StoreResult<void> TrajectoryStore::setRunStatus(RunId run, const std::string& status) {
    return impl_->call("cannot update run " + std::to_string(run), [&] {
        impl_->write([&] {
            sqlite::Query update = impl_->db.query("UPDATE runs SET status = ?2 WHERE id = ?1");
            update.bind(1, run).bind(2, status);
            update.run();
            if (impl_->db.changes() == 0)
                throw Refusal("there is no such run");
        });
    });
}

namespace {
std::string numbersText(const std::vector<double>& values) {
    return nlohmann::json(values).dump();
}

std::vector<double> numbersFrom(const std::string& text) {
    const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
    std::vector<double> out;
    if (parsed.is_array())
        for (const auto& value : parsed)
            out.push_back(value.is_number() ? value.get<double>() : 0.0);
    return out;
}
} // namespace

StoreResult<void> TrajectoryStore::storeAdvantages(const std::vector<EpisodeAdvantage>& values) {
    return impl_->call("cannot store the episodes' advantages", [&] {
        impl_->write([&] {
            for (const EpisodeAdvantage& a : values) {
                sqlite::Query upsert = impl_->db.query(
                    "INSERT OR REPLACE INTO episode_advantages (episode_id, run_id, task, "
                    "group_size, group_complete, reward, advantage, turn_returns, "
                    "turn_gae_advantages, computed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                    "?9, ?10)");
                upsert.bind(1, a.episode)
                    .bind(2, a.run)
                    .bind(3, scrubText(a.task))
                    .bind(4, a.groupSize)
                    .bind(5, a.groupComplete ? 1 : 0)
                    .bind(6, a.reward)
                    .bind(7, a.advantage)
                    .bind(8, numbersText(a.turnReturns))
                    .bind(9, numbersText(a.turnGaeAdvantages))
                    .bind(10, timestampNow());
                upsert.run();
            }
        });
    });
}

StoreResult<std::vector<EpisodeAdvantage>> TrajectoryStore::loadAdvantages(RunId run) const {
    return impl_->call("cannot load the advantages of run " + std::to_string(run), [&] {
        return impl_->read([&] {
            sqlite::Query query = impl_->db.query(
                "SELECT episode_id, run_id, task, group_size, group_complete, reward, advantage, "
                "turn_returns, turn_gae_advantages, computed_at FROM episode_advantages WHERE "
                "run_id = ?1 ORDER BY episode_id");
            query.bind(1, run);
            std::vector<EpisodeAdvantage> out;
            while (query.step()) {
                EpisodeAdvantage a;
                a.episode = query.integer(0);
                a.run = query.integer(1);
                a.task = query.text(2);
                a.groupSize = static_cast<int>(query.integer(3));
                a.groupComplete = query.integer(4) != 0;
                a.reward = query.real(5);
                a.advantage = query.real(6);
                a.turnReturns = numbersFrom(query.text(7));
                a.turnGaeAdvantages = numbersFrom(query.text(8));
                a.computedAt = query.text(9);
                out.push_back(std::move(a));
            }
            return out;
        });
    });
}

StoreResult<EpisodeRecord> TrajectoryStore::loadEpisode(EpisodeId episode) const {
    return impl_->call("cannot load " + episodeName(episode),
                       [&] { return impl_->read([&] { return impl_->episode(episode); }); });
}

StoreResult<std::vector<EpisodeEvent>> TrajectoryStore::loadEvents(EpisodeId episode,
                                                                   std::int64_t from) const {
    return impl_->call("cannot load the events of " + episodeName(episode), [&] {
        return impl_->read([&] {
            if (!impl_->findEpisode(episode))
                throw Refusal("there is no such episode");
            return impl_->events(episode, from);
        });
    });
}

StoreResult<EpisodeTrajectory> TrajectoryStore::loadTrajectory(EpisodeId episode) const {
    return impl_->call("cannot load " + episodeName(episode), [&] {
        return impl_->read([&] {
            EpisodeTrajectory trajectory;
            trajectory.episode = impl_->episode(episode);
            trajectory.events = impl_->events(episode, 0);
            return trajectory;
        });
    });
}

StoreResult<std::vector<EpisodeRecord>>
TrajectoryStore::insertTrajectories(const std::vector<EpisodeTrajectory>& trajectories,
                                    ImportIds ids) {
    return impl_->call("cannot import the episodes", [&] {
        return impl_->write([&] {
            std::map<EpisodeId, EpisodeId> storedIdOf; // the file's id -> this store's id
            std::vector<EpisodeId> storedIds;
            for (const EpisodeTrajectory& t : trajectories) {
                std::int64_t last = 0;
                for (const EpisodeEvent& event : t.events) {
                    if (event.sequence <= last)
                        throw Refusal(episodeName(t.episode.id) +
                                      ": event sequence numbers must increase from 1");
                    last = event.sequence;
                }
                std::optional<EpisodeId> keep;
                if (ids == ImportIds::KeepWhenFree && t.episode.id > 0 &&
                    !impl_->findEpisode(t.episode.id))
                    keep = t.episode.id;
                EpisodeRecord record = t.episode;
                record.parentId.reset(); // linked below, once every id is known
                const EpisodeId id = impl_->insertEpisode(record, keep, record.turns, last);
                for (EpisodeEvent event : t.events) {
                    event.episodeId = id;
                    impl_->insertEvent(event);
                }
                storedIdOf.emplace(t.episode.id, id);
                storedIds.push_back(id);
            }
            for (std::size_t i = 0; i < trajectories.size(); ++i) {
                const auto& parent = trajectories[i].episode.parentId;
                if (!parent || !storedIdOf.contains(*parent))
                    continue;
                sqlite::Query link =
                    impl_->db.query("UPDATE episodes SET parent_id = ?2 WHERE id = ?1");
                link.bind(1, storedIds[i]).bind(2, storedIdOf.at(*parent));
                link.run();
            }
            std::vector<EpisodeRecord> stored;
            for (EpisodeId id : storedIds)
                stored.push_back(impl_->publishEpisode(id));
            return stored;
        });
    });
}

Subscription TrajectoryStore::subscribe(StoreCallback callback) {
    return impl_->broadcaster.subscribe(std::move(callback));
}

std::string TrajectoryStore::scrubText(std::string_view text) const {
    return impl_->scrubText(text);
}

json TrajectoryStore::scrubJson(const json& value) const {
    return impl_->scrubJson(value);
}

} // namespace kwb::agent
