#include "agent/store/episode_record.h"
#include "agent/store/trajectory_store.h"
#include "engine/system/exclusive_file_lock.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <mutex>
#include <sqlite3.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kwb::agent;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

class TrajectoryStoreTest : public testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "kwb-store-XXXXXX").string();
        ASSERT_NE(mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string file(const std::string& name = "store.db") const { return (dir_ / name).string(); }

    std::unique_ptr<TrajectoryStore> open(TrajectoryStoreOptions options = {}) {
        auto store = TrajectoryStore::open(file(), std::move(options));
        EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
        return store.ok() ? std::move(store).value() : nullptr;
    }

    fs::path dir_;
};

EpisodeRecord sampleEpisode(const std::string& task) {
    EpisodeRecord record;
    record.task = task;
    record.provider = "openai at http://127.0.0.1:8000/v1";
    record.model = "qwen-coder";
    record.settings = {{"temperature", 0.7}, {"max_turns", 20}};
    return record;
}

EpisodeOutcome outcome(EpisodeStatus status, std::optional<double> reward = {},
                       json evaluation = nullptr, std::string message = {}) {
    EpisodeOutcome out;
    out.status = status;
    out.reward = reward;
    out.finalEvaluation = std::move(evaluation);
    out.message = std::move(message);
    return out;
}

EpisodeFilter filter(std::optional<std::string> task, std::optional<EpisodeStatus> status,
                     int limit = 100) {
    EpisodeFilter out;
    out.task = std::move(task);
    out.status = status;
    out.limit = limit;
    return out;
}

std::string readBytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

TEST_F(TrajectoryStoreTest, CreateAppendListAndLoadRoundTrip) {
    auto store = open();
    ASSERT_TRUE(store);
    auto first = store->createEpisode(sampleEpisode("tasks/01_gelu.py"));
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_GT(first.value().id, 0);
    EXPECT_EQ(first.value().status, EpisodeStatus::Running);
    EXPECT_FALSE(first.value().startedAt.empty());
    const EpisodeId id = first.value().id;

    const Message assistant =
        Message::assistant("compiling", {{"call_1", "compile", R"({"file":"kernel.cu"})"}});
    ASSERT_TRUE(store
                    ->appendEvent(id, EventKind::SystemPrompt,
                                  messageToJson(Message::system("You write CUDA.")))
                    .ok());
    ASSERT_TRUE(store->appendEvent(id, EventKind::AssistantMessage, messageToJson(assistant)).ok());
    ASSERT_TRUE(store
                    ->appendEvent(id, EventKind::ToolResult,
                                  messageToJson(Message::toolResult("call_1", "ok")))
                    .ok());
    auto evaluation = store->appendEvent(id, EventKind::Evaluation, {{"reward", 2}});
    ASSERT_TRUE(evaluation.ok());
    EXPECT_TRUE(fs::exists(file() + "-wal")); // WAL mode
    EXPECT_EQ(evaluation.value().sequence, 4);
    EXPECT_EQ(evaluation.value().episodeId, id);

    auto events = store->loadEvents(id);
    ASSERT_TRUE(events.ok()) << events.error().message;
    ASSERT_EQ(events.value().size(), 4u);
    for (std::size_t i = 0; i < 4; ++i)
        EXPECT_EQ(events.value()[i].sequence, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(events.value()[3], evaluation.value());
    Message reread;
    ASSERT_TRUE(messageFromJson(events.value()[1].payload, reread));
    EXPECT_EQ(reread, assistant);
    EXPECT_EQ(store->loadEvents(id, 3).value().size(), 2u);

    EpisodeRecord record = store->loadEpisode(id).value();
    EXPECT_EQ(record.task, "tasks/01_gelu.py");
    EXPECT_EQ(record.settings, sampleEpisode("").settings);
    EXPECT_EQ(record.lastSequence, 4);
    EXPECT_EQ(record.turns, 1); // assistant replies only

    record.usage = {1200, 300, 1000};
    record.costUsd = 0.0125;
    auto updated = store->updateEpisode(record);
    ASSERT_TRUE(updated.ok()) << updated.error().message;
    EXPECT_EQ(updated.value().usage, record.usage);
    EXPECT_EQ(updated.value().lastSequence, 4); // no status change, no event

    auto finished =
        store->finishEpisode(id, outcome(EpisodeStatus::Finished, 3.0, {{"correct", true}}));
    ASSERT_TRUE(finished.ok()) << finished.error().message;
    EXPECT_EQ(finished.value().status, EpisodeStatus::Finished);
    EXPECT_EQ(finished.value().reward, 3.0);
    EXPECT_EQ(finished.value().finalEvaluation, (json{{"correct", true}}));
    EXPECT_FALSE(finished.value().finishedAt.empty());
    EXPECT_GE(finished.value().wallSeconds, 0.0);
    const auto status = store->loadEvents(id, 5).value();
    ASSERT_EQ(status.size(), 1u);
    EXPECT_EQ(status[0].kind, EventKind::Status);
    EXPECT_EQ(status[0].payload["status"], "finished");
    EXPECT_EQ(status[0].payload["previous"], "running");
    EXPECT_FALSE(store->finishEpisode(id, {}).ok()); // already finished

    auto second = store->createEpisode(sampleEpisode("tasks/02_gemm.py"));
    ASSERT_TRUE(second.ok());
    auto all = store->listEpisodes();
    ASSERT_TRUE(all.ok());
    ASSERT_EQ(all.value().size(), 2u);
    EXPECT_EQ(all.value()[0].id, second.value().id); // newest first
    EXPECT_EQ(all.value()[1], finished.value());
    EXPECT_EQ(store->listEpisodes(filter("tasks/01_gelu.py", {})).value().size(), 1u);
    EXPECT_EQ(store->listEpisodes(filter({}, EpisodeStatus::Running)).value()[0].id,
              second.value().id);
    EXPECT_EQ(store->listEpisodes(filter({}, {}, 1)).value().size(), 1u);
    EXPECT_TRUE(
        store->listEpisodes(filter("tasks/02_gemm.py", EpisodeStatus::Finished)).value().empty());
}

TEST_F(TrajectoryStoreTest, UnknownEpisodesAndDeletionGiveClearErrors) {
    auto store = open();
    ASSERT_TRUE(store);
    auto missing = store->appendEvent(42, EventKind::Error, {{"message", "x"}});
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message,
              "cannot append an event to episode 42: there is no such episode");
    EXPECT_FALSE(store->loadEpisode(42).ok());
    EXPECT_FALSE(store->loadEvents(42).ok());

    const EpisodeId id = store->createEpisode(sampleEpisode("t")).value().id;
    ASSERT_TRUE(store->appendEvent(id, EventKind::UserMessage, {{"text", "hi"}}).ok());
    ASSERT_TRUE(store->deleteEpisode(id).ok());
    EXPECT_FALSE(store->loadEpisode(id).ok());
    EXPECT_FALSE(store->deleteEpisode(id).ok());
    // Ids are never reused, so a stale id cannot name a new episode.
    EXPECT_GT(store->createEpisode(sampleEpisode("t")).value().id, id);
}

TEST_F(TrajectoryStoreTest, ReopensTheFileAndRefusesANewerSchema) {
    {
        auto store = open();
        ASSERT_TRUE(store);
        ASSERT_TRUE(store->createEpisode(sampleEpisode("t")).ok());
    }
    {
        auto store = open();
        ASSERT_TRUE(store);
        EXPECT_EQ(store->listEpisodes().value().size(), 1u);
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file().c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    auto newer = TrajectoryStore::open(file());
    ASSERT_FALSE(newer.ok());
    EXPECT_NE(newer.error().message.find("newer Kernel Workbench (schema version 99"),
              std::string::npos)
        << newer.error().message;
}

TEST_F(TrajectoryStoreTest, AVersionOneFileMigratesAndKeepsItsEpisodes) {
    {
        // The first schema, as a store of the previous release left it.
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(file().c_str(), &db), SQLITE_OK);
        const char* v1 =
            "CREATE TABLE episodes (id INTEGER PRIMARY KEY AUTOINCREMENT, parent_id INTEGER, "
            "fork_sequence INTEGER, task TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT "
            "NULL, settings TEXT NOT NULL, status TEXT NOT NULL, reward REAL, final_evaluation "
            "TEXT, started_at TEXT NOT NULL, finished_at TEXT, wall_seconds REAL NOT NULL, "
            "input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cached_input_tokens "
            "INTEGER, cost_usd REAL NOT NULL, turns INTEGER NOT NULL, last_sequence INTEGER NOT "
            "NULL);"
            "CREATE TABLE events (episode_id INTEGER NOT NULL, sequence INTEGER NOT NULL, "
            "timestamp TEXT NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL, PRIMARY KEY "
            "(episode_id, sequence));"
            "INSERT INTO episodes VALUES (7, NULL, NULL, 't.py', 'p', 'm', '{}', 'finished', 3.0, "
            "NULL, '2026-11-01T00:00:00.000Z', '2026-11-01T00:01:00.000Z', 60, 1, 2, NULL, 0, 4, "
            "0);"
            "PRAGMA user_version = 1; PRAGMA application_id = 1264009812;";
        ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(db);
    }
    auto store = open();
    ASSERT_TRUE(store);
    const EpisodeRecord old = store->loadEpisode(7).value();
    EXPECT_EQ(old.status, EpisodeStatus::Finished);
    EXPECT_EQ(old.reward, 3.0);
    EXPECT_EQ(old.endCause, "");
    const EpisodeRecord fresh = store->createEpisode(sampleEpisode("new")).value();
    EXPECT_EQ(fresh.owner, TrajectoryStore::thisProcess());
    EpisodeOutcome end;
    end.status = EpisodeStatus::InfrastructureError;
    end.cause = "provider_network";
    const EpisodeRecord ended = store->finishEpisode(fresh.id, end).value();
    EXPECT_EQ(ended.status, EpisodeStatus::InfrastructureError);
    EXPECT_EQ(ended.endCause, "provider_network");
    EXPECT_FALSE(ended.reward.has_value());
}

TEST_F(TrajectoryStoreTest, RunsAreRecordedAndTheirEpisodesFoundByTheirSettings) {
    auto store = open();
    ASSERT_TRUE(store);
    RunRecord run;
    run.taskSet = "/data/kb";
    run.taskSetHash = "abc";
    run.settings = {{"model", "m"}, {"episodes_per_task", 2}};
    run.status = "running";
    const auto created = store->createRun(run);
    ASSERT_TRUE(created) << created.error().message;
    const RunId id = created.value().id;
    EXPECT_GT(id, 0);
    EXPECT_FALSE(created.value().createdAt.empty());
    for (int sample : {0, 1}) {
        EpisodeRecord e = sampleEpisode("/data/kb/level1/1_A.py");
        e.settings = {{"run_id", id}, {"run_task", "level1/1_A"}, {"run_sample", sample}};
        ASSERT_TRUE(store->createEpisode(e));
    }
    ASSERT_TRUE(store->createEpisode(sampleEpisode("/elsewhere.py"))); // not the run's
    EpisodeFilter mine;
    mine.runId = id;
    mine.limit = 0;
    const auto listed = store->listEpisodes(mine);
    ASSERT_TRUE(listed) << listed.error().message;
    ASSERT_EQ(listed.value().size(), 2u);
    for (const auto& e : listed.value())
        EXPECT_EQ(e.settings["run_id"], id);
    mine.runId = id + 1;
    EXPECT_TRUE(store->listEpisodes(mine).value().empty());

    ASSERT_TRUE(store->setRunStatus(id, "finished"));
    const auto loaded = store->loadRun(id);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded.value().status, "finished");
    EXPECT_EQ(loaded.value().taskSetHash, "abc");
    EXPECT_EQ(loaded.value().settings["episodes_per_task"], 2);
    EXPECT_EQ(store->listRuns().value().size(), 1u);
    EXPECT_FALSE(store->loadRun(id + 1));
    EXPECT_FALSE(store->setRunStatus(id + 1, "finished"));
}

TEST_F(TrajectoryStoreTest, EpisodesWhoseProcessDiedAreClosedAsAbandoned) {
    // A child process starts an episode and is killed while it runs.
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t child = fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
        close(ready[0]);
        auto own = TrajectoryStore::open(file());
        const bool made = own.ok() && own.value()->createEpisode(sampleEpisode("dies")).ok();
        if (write(ready[1], made ? "y" : "n", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char made = 0;
    ASSERT_EQ(read(ready[0], &made, 1), 1);
    close(ready[0]);
    ASSERT_EQ(made, 'y');
    auto store = open();
    ASSERT_TRUE(store);
    const EpisodeRecord mine = store->createEpisode(sampleEpisode("alive")).value();
    EpisodeRecord elsewhere = sampleEpisode("another host");
    elsewhere.owner = "some-other-host:1";
    const EpisodeId remote = store->createEpisode(elsewhere).value().id;

    EXPECT_TRUE(store->closeAbandoned().value().empty()) << "the child still runs";
    kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);

    const std::vector<EpisodeRecord> closed = store->closeAbandoned().value();
    ASSERT_EQ(closed.size(), 1u);
    EXPECT_EQ(closed[0].task, "dies");
    EXPECT_EQ(closed[0].status, EpisodeStatus::InfrastructureError);
    EXPECT_EQ(closed[0].endCause, "abandoned");
    EXPECT_FALSE(closed[0].reward.has_value());
    EXPECT_FALSE(closed[0].finishedAt.empty());
    const auto events = store->loadEvents(closed[0].id).value();
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, EventKind::Status);
    EXPECT_EQ(events.back().payload["cause"], "abandoned");
    EXPECT_EQ(store->loadEpisode(mine.id).value().status, EpisodeStatus::Running);
    EXPECT_EQ(store->loadEpisode(remote).value().status, EpisodeStatus::Running)
        << "another host's process cannot be checked from here";
    EXPECT_TRUE(store->closeAbandoned().value().empty()) << "closed once";
}

// A fork (what `kwb agent --resume` runs) is a running row of this process too: it takes the
// owner lock even when no episode was created running before it in this store.
TEST_F(TrajectoryStoreTest, AForkHoldsItsProcessesOwnerLock) {
    auto store = open();
    ASSERT_TRUE(store);
    EpisodeRecord ended = sampleEpisode("imported, already ended");
    ended.status = EpisodeStatus::Finished;
    const EpisodeId source = store->createEpisode(ended).value().id;
    const std::string lock = file() + ".owners/" + TrajectoryStore::thisProcess() + ".lock";
    ASSERT_FALSE(fs::exists(lock)) << "an ended row takes no lock";
    const EpisodeRecord fork = store->forkEpisode(source, 0).value();
    EXPECT_EQ(fork.status, EpisodeStatus::Running);
    EXPECT_TRUE(fs::is_regular_file(lock)) << "the running fork's process holds its lock file";
}

// A row left running by a kwb killed under another hostname (a restarted container, the store on
// a volume) is closed once nobody holds its owner's lock file; a live owner elsewhere, holding
// it, keeps its rows; a row without a lock file keeps the host-and-pid rule.
TEST_F(TrajectoryStoreTest, OwnerLockFilesCloseAnotherHostsDeadEpisodes) {
    auto store = open();
    ASSERT_TRUE(store);
    const EpisodeRecord mine = store->createEpisode(sampleEpisode("mine")).value();
    const std::string owners = file() + ".owners/";
    EXPECT_TRUE(fs::is_regular_file(owners + TrajectoryStore::thisProcess() + ".lock"))
        << "a process running episodes holds its lock file";

    EpisodeRecord dead = sampleEpisode("killed in a container");
    dead.owner = "container-abc123:57";
    const EpisodeId deadId = store->createEpisode(dead).value().id;
    std::ofstream(owners + "container-abc123:57.lock") << "57\n"; // left behind, held by nobody

    EpisodeRecord live = sampleEpisode("running in another container");
    live.owner = "container-def456:58";
    const EpisodeId liveId = store->createEpisode(live).value().id;
    std::string error;
    auto held = kwb::ExclusiveFileLock::tryAcquire(owners + "container-def456:58.lock", &error);
    ASSERT_TRUE(held) << error;

    EpisodeRecord unknown = sampleEpisode("an older kwb elsewhere");
    unknown.owner = "some-other-host:1";
    const EpisodeId unknownId = store->createEpisode(unknown).value().id;

    const std::vector<EpisodeRecord> closed = store->closeAbandoned().value();
    ASSERT_EQ(closed.size(), 1u);
    EXPECT_EQ(closed[0].id, deadId);
    EXPECT_EQ(closed[0].status, EpisodeStatus::InfrastructureError);
    EXPECT_EQ(closed[0].endCause, "abandoned");
    EXPECT_FALSE(fs::exists(owners + "container-abc123:57.lock"));
    EXPECT_EQ(store->loadEpisode(liveId).value().status, EpisodeStatus::Running);
    EXPECT_EQ(store->loadEpisode(unknownId).value().status, EpisodeStatus::Running);
    EXPECT_EQ(store->loadEpisode(mine.id).value().status, EpisodeStatus::Running);

    held.reset(); // that container's kwb dies too
    const std::vector<EpisodeRecord> later = store->closeAbandoned().value();
    ASSERT_EQ(later.size(), 1u);
    EXPECT_EQ(later[0].id, liveId);
}

TEST_F(TrajectoryStoreTest, ConcurrentAppendsFromFourThreadsGetDistinctSequences) {
    auto store = open();
    ASSERT_TRUE(store);
    const EpisodeId id = store->createEpisode(sampleEpisode("t")).value().id;
    constexpr int kThreads = 4, kEach = 50;
    std::vector<std::vector<std::int64_t>> seen(kThreads);
    std::atomic<int> failures = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < kEach; ++i) {
                auto event = store->appendEvent(id, EventKind::ToolCall, {{"thread", t}, {"i", i}});
                if (event.ok())
                    seen[t].push_back(event.value().sequence);
                else
                    ++failures;
            }
        });
    for (auto& thread : threads)
        thread.join();
    EXPECT_EQ(failures, 0);

    std::vector<std::int64_t> all;
    for (const auto& mine : seen) {
        EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
        all.insert(all.end(), mine.begin(), mine.end());
    }
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), std::size_t{kThreads * kEach});
    for (std::size_t i = 0; i < all.size(); ++i)
        EXPECT_EQ(all[i], static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(store->loadEpisode(id).value().lastSequence, kThreads * kEach);
    EXPECT_EQ(store->loadEvents(id).value().size(), std::size_t{kThreads * kEach});
}

TEST_F(TrajectoryStoreTest, TwoStoreObjectsOnOneFileWriteConcurrently) {
    auto a = open();
    auto b = open();
    ASSERT_TRUE(a && b);
    const EpisodeId shared = a->createEpisode(sampleEpisode("shared")).value().id;
    constexpr int kEach = 100;
    std::atomic<int> failures = 0;
    auto writer = [&](TrajectoryStore& store, const std::string& task) {
        auto own = store.createEpisode(sampleEpisode(task));
        if (!own.ok()) {
            ++failures;
            return;
        }
        for (int i = 0; i < kEach; ++i) {
            if (!store.appendEvent(shared, EventKind::ToolResult, {{"task", task}}).ok())
                ++failures;
            if (!store.appendEvent(own.value().id, EventKind::ToolCall, {{"i", i}}).ok())
                ++failures;
        }
    };
    std::thread first(writer, std::ref(*a), "a");
    std::thread second(writer, std::ref(*b), "b");
    first.join();
    second.join();
    EXPECT_EQ(failures, 0);
    const auto events = b->loadEvents(shared).value();
    ASSERT_EQ(events.size(), std::size_t{2 * kEach});
    for (std::size_t i = 0; i < events.size(); ++i)
        EXPECT_EQ(events[i].sequence, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(a->listEpisodes().value().size(), 3u);
}

TEST_F(TrajectoryStoreTest, AnotherProcessWritesTheSameFileConcurrently) {
    EpisodeId shared = 0;
    {
        // Closed before fork(): SQLite forbids carrying an open connection into a child.
        auto store = open();
        ASSERT_TRUE(store);
        shared = store->createEpisode(sampleEpisode("shared")).value().id;
    }
    constexpr int kEach = 100;
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t child = fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
        close(ready[1]);
        auto own = TrajectoryStore::open(file());
        char go = 0;
        int failures = own.ok() && read(ready[0], &go, 1) == 1 ? 0 : 1;
        for (int i = 0; own.ok() && i < kEach; ++i)
            if (!own.value()->appendEvent(shared, EventKind::ToolCall, {{"from", "child"}}).ok())
                ++failures;
        _exit(failures == 0 ? 0 : 1);
    }
    close(ready[0]);
    auto store = open();
    ASSERT_TRUE(store);
    ASSERT_EQ(write(ready[1], "g", 1), 1); // both start writing together
    close(ready[1]);
    int failures = 0;
    for (int i = 0; i < kEach; ++i)
        if (!store->appendEvent(shared, EventKind::ToolCall, {{"from", "parent"}}).ok())
            ++failures;
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(failures, 0);
    const auto events = store->loadEvents(shared).value();
    ASSERT_EQ(events.size(), std::size_t{2 * kEach});
    EXPECT_EQ(events.back().sequence, 2 * kEach);
    EXPECT_EQ(std::count_if(events.begin(), events.end(),
                            [](const auto& e) { return e.payload["from"] == "child"; }),
              kEach);
}

TEST_F(TrajectoryStoreTest, ForkCopiesTheEventsUpToTheStep) {
    auto store = open();
    ASSERT_TRUE(store);
    const EpisodeId source = store->createEpisode(sampleEpisode("t")).value().id;
    for (int i = 1; i <= 5; ++i)
        ASSERT_TRUE(store
                        ->appendEvent(source,
                                      i % 2 ? EventKind::AssistantMessage : EventKind::ToolResult,
                                      {{"step", i}})
                        .ok());

    auto fork = store->forkEpisode(source, 3);
    ASSERT_TRUE(fork.ok()) << fork.error().message;
    EXPECT_NE(fork.value().id, source);
    EXPECT_EQ(fork.value().parentId, source);
    EXPECT_EQ(fork.value().forkSequence, 3);
    EXPECT_EQ(fork.value().status, EpisodeStatus::Running);
    EXPECT_EQ(fork.value().task, "t");
    EXPECT_EQ(fork.value().turns, 2); // assistant messages at steps 1 and 3
    EXPECT_EQ(fork.value().lastSequence, 3);

    const auto parentEvents = store->loadEvents(source).value();
    auto forkEvents = store->loadEvents(fork.value().id).value();
    ASSERT_EQ(forkEvents.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(forkEvents[i].episodeId, fork.value().id);
        forkEvents[i].episodeId = source;
        EXPECT_EQ(forkEvents[i], parentEvents[i]);
    }
    EXPECT_EQ(store->appendEvent(fork.value().id, EventKind::Steering, {{"hint", "tile"}})
                  .value()
                  .sequence,
              4);
    EXPECT_EQ(store->loadEvents(source).value().size(), 5u); // the source is untouched

    EXPECT_EQ(store->forkEpisode(source, 0).value().lastSequence, 0);
    auto tooFar = store->forkEpisode(source, 9);
    ASSERT_FALSE(tooFar.ok());
    EXPECT_EQ(tooFar.error().message, "cannot fork episode " + std::to_string(source) +
                                          ": it has steps 1..5, so there is no step 9");

    ASSERT_TRUE(store->deleteEpisode(source).ok());
    const auto orphan = store->loadEpisode(fork.value().id).value();
    EXPECT_FALSE(orphan.parentId);
    EXPECT_EQ(store->loadEvents(orphan.id).value().size(), 4u);
}

TEST_F(TrajectoryStoreTest, SubscribersHearEveryChangeInCommitOrder) {
    auto store = open();
    ASSERT_TRUE(store);
    const EpisodeId id = store->createEpisode(sampleEpisode("t")).value().id;

    std::mutex mutex;
    std::vector<std::int64_t> sequences;
    std::vector<StoreUpdate::Kind> kinds;
    bool readInsideCallback = true;
    Subscription subscription = store->subscribe([&](const StoreUpdate& update) {
        // The store's lock is not held here: reading back must not deadlock.
        if (update.kind == StoreUpdate::Kind::EventAppended &&
            !store->loadEvents(id, update.event.sequence).ok())
            readInsideCallback = false;
        std::lock_guard lock(mutex);
        kinds.push_back(update.kind);
        if (update.kind == StoreUpdate::Kind::EventAppended)
            sequences.push_back(update.event.sequence);
    });

    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 25; ++i)
                (void)store->appendEvent(id, EventKind::ToolCall, {{"i", i}});
        });
    for (auto& thread : threads)
        thread.join();
    EXPECT_TRUE(readInsideCallback);
    ASSERT_EQ(sequences.size(), 100u);
    for (std::size_t i = 0; i < sequences.size(); ++i)
        EXPECT_EQ(sequences[i], static_cast<std::int64_t>(i + 1));

    kinds.clear();
    ASSERT_TRUE(
        store->finishEpisode(id, outcome(EpisodeStatus::Stopped, {}, nullptr, "user pressed stop"))
            .ok());
    EXPECT_EQ(kinds,
              (std::vector{StoreUpdate::Kind::EventAppended, StoreUpdate::Kind::EpisodeChanged}));
    EXPECT_EQ(sequences.back(), 101);

    subscription.reset();
    EXPECT_FALSE(subscription.active());
    ASSERT_TRUE(store->appendEvent(id, EventKind::Steering, {}).ok());
    EXPECT_EQ(sequences.size(), 101u);
}

TEST_F(TrajectoryStoreTest, ACallbackMayWriteAndEndItsOwnSubscription) {
    auto store = open();
    ASSERT_TRUE(store);
    const EpisodeId id = store->createEpisode(sampleEpisode("t")).value().id;
    std::vector<std::int64_t> heard;
    Subscription subscription;
    subscription = store->subscribe([&](const StoreUpdate& update) {
        if (update.kind != StoreUpdate::Kind::EventAppended)
            return;
        heard.push_back(update.event.sequence);
        if (update.event.kind == EventKind::UserMessage)
            (void)store->appendEvent(id, EventKind::AssistantMessage, {{"text", "auto reply"}});
        else
            subscription.reset();
    });
    ASSERT_TRUE(store->appendEvent(id, EventKind::UserMessage, {{"text", "hi"}}).ok());
    EXPECT_EQ(heard, (std::vector<std::int64_t>{1, 2}));
    EXPECT_FALSE(subscription.active());
    ASSERT_TRUE(store->appendEvent(id, EventKind::UserMessage, {{"text", "again"}}).ok());
    EXPECT_EQ(heard.size(), 2u);
}

TEST_F(TrajectoryStoreTest, ANonDatabaseFileGivesAClearErrorAndStaysUntouched) {
    const std::string garbage(8192, 'x');
    {
        std::ofstream out(file(), std::ios::binary);
        out << "this is not a database\n" << garbage;
    }
    const std::string before = readBytes(file());
    auto store = TrajectoryStore::open(file());
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().message,
              "cannot open the trajectory store " + file() + ": file is not a database");
    EXPECT_EQ(readBytes(file()), before);
    EXPECT_FALSE(fs::exists(file() + "-wal"));
}

TEST_F(TrajectoryStoreTest, AnotherSqliteDatabaseIsNotTakenForAStore) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file().c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE episodes (x)", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    auto store = TrajectoryStore::open(file());
    ASSERT_FALSE(store.ok());
    EXPECT_NE(store.error().message.find("not a trajectory store"), std::string::npos)
        << store.error().message;
}

TEST_F(TrajectoryStoreTest, DamagedPagesGiveErrorsNotCrashes) {
    {
        auto store = open();
        ASSERT_TRUE(store);
        const EpisodeId id = store->createEpisode(sampleEpisode("t")).value().id;
        for (int i = 0; i < 200; ++i)
            ASSERT_TRUE(store
                            ->appendEvent(id, EventKind::ToolResult,
                                          {{"output", std::string(200, 'a' + i % 26)}})
                            .ok());
    } // the last connection checkpoints the WAL into the file
    const auto size = fs::file_size(file());
    ASSERT_GT(size, 3 * 4096u);
    {
        std::fstream io(file(), std::ios::binary | std::ios::in | std::ios::out);
        io.seekp(4096 + 16); // inside page 2, past page 1's header that names the schema
        const std::string noise(3 * 4096, '\xa5');
        io.write(noise.data(), static_cast<std::streamsize>(noise.size()));
    }
    auto store = TrajectoryStore::open(file());
    if (!store.ok()) {
        EXPECT_FALSE(store.error().message.empty());
        return;
    }
    // Whatever SQLite notices, every call answers with a value or a message.
    auto list = store.value()->listEpisodes();
    auto events = store.value()->loadEvents(1);
    auto append = store.value()->appendEvent(1, EventKind::Error, {{"message", "x"}});
    for (const std::string& message : {list.ok() ? std::string() : list.error().message,
                                       events.ok() ? std::string() : events.error().message,
                                       append.ok() ? std::string() : append.error().message}) {
        if (!message.empty()) {
            EXPECT_NE(message.find("cannot"), std::string::npos) << message;
        }
    }
    EXPECT_FALSE(list.ok() && events.ok() && append.ok());
}

TEST_F(TrajectoryStoreTest, SecretsNeverReachTheFile) {
    const std::string key = "sk-test-Zq81LmN0pQ4rS7tUv2wXy";
    TrajectoryStoreOptions options;
    options.secrets = {key, ""};
    auto store = open(options);
    ASSERT_TRUE(store);
    EpisodeRecord record = sampleEpisode("task with " + key);
    record.settings = {{"api_key", key}, {key, "as a key"}, {"nested", {{"list", {1, key}}}}};
    record.provider = "openai (key " + key + ")";
    auto created = store->createEpisode(record);
    ASSERT_TRUE(created.ok());
    const EpisodeId id = created.value().id;
    EXPECT_EQ(created.value().settings["api_key"], "[redacted]");

    const Message call = Message::assistant(
        "calling", {{"c1", "shell", R"({"cmd":"curl -H 'Authorization: Bearer )" + key + "'\"}"}});
    auto event = store->appendEvent(id, EventKind::AssistantMessage, messageToJson(call));
    ASSERT_TRUE(event.ok());
    EXPECT_EQ(event.value().payload.dump().find(key), std::string::npos);
    ASSERT_TRUE(store
                    ->appendEvent(id, EventKind::Error,
                                  {{"message", "401: Incorrect API key provided: " + key}})
                    .ok());
    ASSERT_TRUE(store->appendEvent(id, EventKind::ToolResult, {{"output", key + key}}).ok());
    record = store->loadEpisode(id).value();
    record.model = key;
    ASSERT_TRUE(store->updateEpisode(record).ok());
    ASSERT_TRUE(store
                    ->finishEpisode(
                        id, outcome(EpisodeStatus::Failed, -1.0, {{"log", key}}, "failed: " + key))
                    .ok());
    auto forked = store->forkEpisode(id, 2);
    ASSERT_TRUE(forked.ok());
    EXPECT_EQ(store->loadEvents(id).value()[1].payload["message"],
              "401: Incorrect API key provided: [redacted]");

    auto scanFiles = [&] {
        for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
            const fs::path path = file() + suffix;
            if (fs::exists(path)) {
                EXPECT_EQ(readBytes(path).find(key), std::string::npos) << path;
            }
        }
    };
    scanFiles(); // with the WAL still open
    store.reset();
    scanFiles(); // after the checkpoint
}
