#pragma once

#include "agent/store/episode_record.h"
#include "agent/store/store_subscriptions.h"

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kwb::agent {

// Why a store call failed, written for the user ("cannot append an event: no episode 12").
struct StoreError {
    std::string message;
};

// What every store call returns: a value or a StoreError, never an exception.
template <typename T>
class [[nodiscard]] StoreResult {
public:
    StoreResult(T value) : value_(std::move(value)) {}
    StoreResult(StoreError error) : value_(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(value_); }
    explicit operator bool() const { return ok(); }

    // Calling the wrong one throws std::bad_variant_access.
    const T& value() const& { return std::get<T>(value_); }
    T& value() & { return std::get<T>(value_); }
    T&& value() && { return std::get<T>(std::move(value_)); }
    const StoreError& error() const { return std::get<StoreError>(value_); }

private:
    std::variant<T, StoreError> value_;
};

template <>
class [[nodiscard]] StoreResult<void> {
public:
    StoreResult() = default;
    StoreResult(StoreError error) : error_(std::move(error)) {}

    bool ok() const { return !error_; }
    explicit operator bool() const { return ok(); }
    const StoreError& error() const { return error_.value(); }

private:
    std::optional<StoreError> error_;
};

struct TrajectoryStoreOptions {
    // API keys and other credentials. Every text the store writes (payloads, settings, error
    // messages) has them replaced by "[redacted]" first: a last line of defence when a key has
    // slipped into a tool output or an echoed error body.
    std::vector<std::string> secrets;
    // How long a write waits for another connection (thread or process) to release the file.
    std::chrono::milliseconds busyTimeout{std::chrono::seconds(30)};
};

using RunId = std::int64_t;

// A rollout run: many episodes over a task set (agent/rollout/rollout_runner.h). Its episodes
// carry "run_id", "run_task" and "run_sample" in their settings.
struct RunRecord {
    RunId id = 0;
    std::string createdAt;
    std::string taskSet;     // the task set's path
    std::string taskSetHash; // TaskSet::contentHash when the run was made
    nlohmann::json settings = nlohmann::json::object(); // what resuming needs, never a key
    std::string status;                                 // "running", "finished", "stopped"
};

// What a rollout computed of one scored episode for training, within its task's group (the K
// samples of one task): GRPO's group-normalised advantage, and per model turn PPO's return and
// GAE advantage (gamma 1, lambda 0.95; no critic yet, V = 0; the reward on the last turn).
// Recomputed for the whole group each time one of its samples is scored; groupComplete once all
// K are.
struct EpisodeAdvantage {
    EpisodeId episode = 0;
    RunId run = 0;
    std::string task;  // the group: the task set's id
    int groupSize = 0; // scored samples it was computed over
    bool groupComplete = false;
    double reward = 0.0;
    double advantage = 0.0;
    std::vector<double> turnReturns;       // one per model turn, in order
    std::vector<double> turnGaeAdvantages; // the same
    std::string computedAt;                // set by the store
};

struct EpisodeFilter {
    std::optional<std::string> task;
    std::optional<EpisodeStatus> status;
    std::optional<RunId> runId; // only this run's episodes
    int limit = 100;            // 0 or less: all

    static EpisodeFilter everyEpisodeOf(RunId run) {
        EpisodeFilter filter;
        filter.runId = run;
        filter.limit = 0;
        return filter;
    }
};

// How an episode ended, for finishEpisode().
struct EpisodeOutcome {
    EpisodeStatus status = EpisodeStatus::Finished;
    std::optional<double> reward;
    nlohmann::json finalEvaluation; // an EvaluationResult's toJson(); null when none
    std::string message;            // why it failed or was stopped, for the status event
    std::string cause;              // EpisodeRecord::endCause
};

// Imported episodes get new ids, or keep theirs where this store has no episode with that id.
enum class ImportIds { Renumber, KeepWhenFree };

// The agent's episodes and their events in one SQLite file (WAL mode).
//
// Threads: one connection per store object, every call serialised on one mutex, so a store is
// safe to share between threads. Processes and other store objects on the same file write
// concurrently through SQLite's locking: writes take the write lock up front, wait up to
// busyTimeout, and retry the transaction when the file stays busy.
//
// Live consumers in this process subscribe(); consumers in other processes poll
// loadEvents(id, lastSeen + 1), comparing with EpisodeRecord::lastSequence.
class TrajectoryStore {
public:
    static constexpr int kSchemaVersion = 4;

    // Where the GUI, `kwb agent` and `kwb episodes` keep episodes unless told otherwise:
    // <state folder>/trajectories.db (KWB_STATE_DIR, else the XDG state folder).
    static std::string defaultPath();

    // A file path (created when missing) or ":memory:".
    static StoreResult<std::unique_ptr<TrajectoryStore>> open(const std::string& path,
                                                              TrajectoryStoreOptions options = {});
    ~TrajectoryStore();
    TrajectoryStore(const TrajectoryStore&) = delete;
    TrajectoryStore& operator=(const TrajectoryStore&) = delete;

    const std::string& path() const;

    // Stores a new episode (record.id, lastSequence and turns are ignored; an empty startedAt
    // is stamped now) and returns it as stored.
    StoreResult<EpisodeRecord> createEpisode(EpisodeRecord record);
    // Assigns the episode's next sequence number and the timestamp atomically, so concurrent
    // writers never collide, and counts assistant messages into `turns`.
    StoreResult<EpisodeEvent> appendEvent(EpisodeId episode, EventKind kind,
                                          nlohmann::json payload);
    // Writes everything but id, parent, fork step, startedAt, turns and lastSequence. A status
    // change also appends a status event.
    StoreResult<EpisodeRecord> updateEpisode(const EpisodeRecord& record);
    // Ends a running episode: status, reward, final evaluation, finishedAt and wallSeconds,
    // plus a status event.
    StoreResult<EpisodeRecord> finishEpisode(EpisodeId episode, EpisodeOutcome outcome);
    // A new running episode that starts with copies of the source's events 1..upToSequence
    // (0: none), linked to its parent. Its usage and cost start at zero.
    StoreResult<EpisodeRecord> forkEpisode(EpisodeId source, std::int64_t upToSequence);
    // Closes the running episodes whose process is gone (killed, crashed, the machine or its
    // container restarted): infrastructure_error, cause "abandoned", no reward. A process holds
    // an owner lock file beside the store ("<store>.owners/") while it runs episodes, so one on
    // another host or under a reused pid is judged too; without that file, only this host's
    // processes can be checked (by pid). Returns them as they are now. Every front end calls it
    // when it starts.
    StoreResult<std::vector<EpisodeRecord>> closeAbandoned();
    // "<host>:<pid>" of this process, as createEpisode stamps an episode's owner.
    static std::string thisProcess();
    // Removes the episode and its events; its forks stay and lose their parent link.
    StoreResult<void> deleteEpisode(EpisodeId episode);

    StoreResult<RunRecord> createRun(RunRecord run); // id and createdAt are assigned
    StoreResult<RunRecord> loadRun(RunId run) const;
    StoreResult<std::vector<RunRecord>> listRuns() const; // newest first
    StoreResult<void> setRunStatus(RunId run, const std::string& status);
    // Writes (or replaces) the episodes' training values in one transaction.
    StoreResult<void> storeAdvantages(const std::vector<EpisodeAdvantage>& values);
    StoreResult<std::vector<EpisodeAdvantage>> loadAdvantages(RunId run) const; // by episode id

    StoreResult<std::vector<EpisodeRecord>> listEpisodes(const EpisodeFilter& filter = {}) const;
    StoreResult<EpisodeRecord> loadEpisode(EpisodeId episode) const;
    StoreResult<std::vector<EpisodeEvent>> loadEvents(EpisodeId episode,
                                                      std::int64_t fromSequence = 1) const;
    // The record and all its events from one snapshot.
    StoreResult<EpisodeTrajectory> loadTrajectory(EpisodeId episode) const;

    // Inserts whole episodes in one transaction: all of them or, on any error, none. Parent
    // links survive only between episodes of the same batch (any other id would name an
    // unrelated episode here). Returns the stored records in input order.
    StoreResult<std::vector<EpisodeRecord>>
    insertTrajectories(const std::vector<EpisodeTrajectory>& trajectories, ImportIds ids);

    // Every committed change by this store object, in commit order, on the writing thread and
    // without the store's lock held (a callback may read or write the store). Subscribe before
    // loading history, and drop events whose sequence you already have.
    Subscription subscribe(StoreCallback callback);

    // The secrets replaced by "[redacted]", as the store does before writing.
    std::string scrubText(std::string_view text) const;
    nlohmann::json scrubJson(const nlohmann::json& value) const; // keys and string values

private:
    struct Impl;
    explicit TrajectoryStore(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace kwb::agent
