// The soak: many agent episodes through the real engine while things go wrong around them. The
// scripted LLM server plays the model (a Write, then a Verify, over and over), cuts some of its
// streams and fails some requests; some candidates hang past the stage timeout or crash; a
// killer thread SIGKILLs harness processes (the warm worker's server and its stage children) at
// random moments. Afterwards every episode, tool call and evaluation must be in the store exactly
// once, in order, the database must pass PRAGMA integrity_check, nothing may be left running, and
// the next evaluation must be fine.
//
// KWB_SOAK_EVALUATIONS (default 30) sets the number of Verify calls; bench/soak.sh runs 500.
// KWB_SOAK_SEED (default 1) picks the candidates, faults and kill times; KWB_SOAK_KILL_SECONDS
// (default 10) is the mean time between kills.
#include "agent/session/episode_runner.h"
#include "agent/store/sqlite_database.h"
#include "agent/tools/files/file_tools.h"
#include "agent/tools/workspace_tools.h"
#include "engine/evaluation/warm_worker.h"
#include "engine/process/process_table.h"
#include "tests/agent/provider_test_support.h"
#include "tests/engine/evaluation_fixture.h"
#include "tests/soak/harness_killer.h"
#include "tests/soak/soak_plan.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <set>

using namespace kwb;
using namespace kwb::test;
using namespace kwb::agent;
using namespace kwb::agent::test_support;
using nlohmann::json;

namespace {

int environmentNumber(const char* name, int fallback) {
    const char* text = std::getenv(name);
    return text && *text ? std::max(1, std::atoi(text)) : fallback;
}

// The store's timestamps ("2026-12-02T01:02:03.456Z") as system-clock times.
std::chrono::system_clock::time_point parseStoreTime(const std::string& text) {
    std::tm utc{};
    int milliseconds = 0;
    if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &utc.tm_year, &utc.tm_mon, &utc.tm_mday,
                    &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &milliseconds) != 7)
        return {};
    utc.tm_year -= 1900;
    utc.tm_mon -= 1;
    return std::chrono::system_clock::from_time_t(timegm(&utc)) +
           std::chrono::milliseconds(milliseconds);
}

// What one Verify call of the plan produced, read back from the store.
struct ObservedEvaluation {
    Variant variant = Variant::Good;
    json evaluation;
    bool touchedByKill = false;
};

// An episode's events in short, for a failure message: kind, and the tool's name or the error.
std::string describeEvents(const std::vector<EpisodeEvent>& events) {
    std::string text;
    for (const EpisodeEvent& event : events) {
        text += "\n  " + std::to_string(event.sequence) + " " + event.timestamp + " " +
                std::string(eventKindName(event.kind));
        if (event.kind == EventKind::ToolCall)
            text += " " + event.payload.value("name", "") + " " + event.payload.value("id", "");
        if (event.kind == EventKind::AssistantMessage)
            text += " \"" + event.payload.value("text", "").substr(0, 60) + "\"";
        if (event.kind == EventKind::Error || event.kind == EventKind::Status)
            text += " " + event.payload.dump().substr(0, 300);
    }
    return text;
}

class SoakTest : public EvaluationTest {
protected:
    void TearDown() override {
        WarmWorkerPool::shared().shutdown();
        EvaluationTest::TearDown();
    }
};

} // namespace

TEST_F(SoakTest, EveryRecordSurvivesKillsTimeoutsAndCutStreams) {
    const int evaluations = environmentNumber("KWB_SOAK_EVALUATIONS", 30);
    const auto seed = static_cast<std::uint32_t>(environmentNumber("KWB_SOAK_SEED", 1));
    SoakPlan plan = makeSoakPlan(evaluations, seed);
    // A kill every few evaluations on average, so that most evaluations run undisturbed and
    // their verdicts can be checked against their candidates.
    const int killSeconds = environmentNumber("KWB_SOAK_KILL_SECONDS", 10);
    plan.killIntervalMin = std::chrono::milliseconds(500 * killSeconds);
    plan.killIntervalMax = std::chrono::milliseconds(1500 * killSeconds);

    ToolRegistry registry;
    registry.add(makeWriteTool());
    for (auto& tool : makeWorkspaceTools())
        registry.add(std::move(tool));
    auto opened = TrajectoryStore::open((root_ / "soak.db").string());
    ASSERT_TRUE(opened) << opened.error().message;
    std::unique_ptr<TrajectoryStore> store = std::move(opened).value();

    ScriptedLlmServer server(json{{"turns", plan.scriptTurns()}});
    ASSERT_TRUE(server.started()) << server.startError();
    RecordedWaits waits;
    auto provider = makeProvider(settingsFor(Api::OpenAi, server), waits.sleeper());
    ASSERT_TRUE(provider);

    EvaluationOptions options = cpuOptions();
    options.warmWorker = true;
    // Long enough for an honest verify on a loaded two-core CI machine, short enough that the
    // hanging candidates do not dominate the run.
    options.stageTimeout = std::chrono::seconds(8);

    const auto started = std::chrono::steady_clock::now();
    HarnessKiller killer(seed, plan.killIntervalMin, plan.killIntervalMax);
    std::vector<EpisodeRunResult> results;
    for (std::size_t e = 0; e < plan.episodes.size(); ++e) {
        const fs::path workspace = makePythonWorkspace(kTinyTask, tinyCandidate("        return x"),
                                                       "ws" + std::to_string(e));
        EpisodeConfig config;
        config.taskPath = (root_ / ("ws" + std::to_string(e) + "_task.py")).string();
        config.workspace = workspace.string();
        config.model = "test-model";
        config.evaluation = options;
        config.python = KWB_TEST_EXPECTED_PYTHON;
        config.finalEvaluation = false;
        SteeringController steering;
        EpisodeRunner runner(*store, *provider, registry, steering, config);
        results.push_back(runner.run());
    }
    const std::vector<HarnessKiller::Kill> kills = killer.stop();
    const double wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    // Every episode once, finished by the model's last answer, with every planned request
    // served (faults consume an attempt, never a turn).
    EpisodeFilter all;
    all.limit = 0;
    auto listed = store->listEpisodes(all);
    ASSERT_TRUE(listed) << listed.error().message;
    ASSERT_EQ(listed.value().size(), plan.episodes.size());
    std::set<EpisodeId> ids;
    for (const EpisodeRunResult& result : results) {
        EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
        EXPECT_TRUE(ids.insert(result.id).second) << "episode " << result.id << " twice";
    }
    for (const EpisodeRecord& record : listed.value())
        EXPECT_TRUE(ids.contains(record.id)) << "an episode nobody ran: " << record.id;
    EXPECT_EQ(server.requests().size(), plan.requestCount());
    if (server.requests().size() != plan.requestCount())
        for (const json& request : server.requests())
            std::cout << "request: turn " << request.value("turn", json()).dump() << " fault "
                      << request.value("fault", json()).dump() << " problem "
                      << request.value("problem", json()).dump() << "\n";

    // Every step once and in order: sequence numbers 1..last, each tool call answered by exactly
    // one result, each Verify by exactly one evaluation, in the plan's order of candidates.
    std::vector<ObservedEvaluation> observed;
    for (std::size_t e = 0; e < results.size(); ++e) {
        auto events = store->loadEvents(results[e].id);
        ASSERT_TRUE(events) << events.error().message;
        auto record = store->loadEpisode(results[e].id);
        ASSERT_TRUE(record);
        ASSERT_EQ(static_cast<std::int64_t>(events.value().size()), record.value().lastSequence);
        std::map<std::string, int> resultsPerCall;
        std::map<std::string, std::string> callTimes;
        std::vector<std::string> verifyCalls;
        std::size_t nextVariant = 0;
        for (std::size_t i = 0; i < events.value().size(); ++i) {
            const EpisodeEvent& event = events.value()[i];
            ASSERT_EQ(event.sequence, static_cast<std::int64_t>(i + 1));
            if (event.kind == EventKind::ToolCall) {
                const std::string id = event.payload.value("id", "");
                EXPECT_FALSE(callTimes.contains(id)) << "tool call " << id << " twice";
                callTimes[id] = event.timestamp;
                resultsPerCall[id] += 0;
                if (event.payload.value("name", "") == "Verify")
                    verifyCalls.push_back(id);
            } else if (event.kind == EventKind::ToolResult) {
                ++resultsPerCall[event.payload.value("tool_call_id", "")];
            } else if (event.kind == EventKind::Evaluation) {
                ASSERT_FALSE(verifyCalls.empty());
                ASSERT_LT(nextVariant, plan.episodes[e].size());
                const std::string& callId = verifyCalls.back();
                ObservedEvaluation seen;
                seen.variant = plan.episodes[e][nextVariant++];
                seen.evaluation = event.payload;
                const auto from = parseStoreTime(callTimes[callId]);
                const auto to = parseStoreTime(event.timestamp);
                for (const auto& kill : kills)
                    seen.touchedByKill |= kill.at >= from - std::chrono::milliseconds(5) &&
                                          kill.at <= to + std::chrono::milliseconds(5);
                observed.push_back(std::move(seen));
            }
        }
        for (const auto& [id, count] : resultsPerCall)
            EXPECT_EQ(count, 1) << "tool call " << id << " of episode " << results[e].id;
        EXPECT_EQ(verifyCalls.size(), plan.episodes[e].size())
            << "episode " << results[e].id << " (" << results[e].message
            << "): " << describeEvents(events.value());
        EXPECT_EQ(nextVariant, plan.episodes[e].size());
    }
    ASSERT_EQ(observed.size(), static_cast<std::size_t>(evaluations));

    // An evaluation no kill touched ends as its candidate deserves; one a kill touched ends with
    // a verdict all the same (a crash, or the cold stage that replaced the killed worker).
    std::map<std::string, int> outcomes;
    int touched = 0;
    for (const ObservedEvaluation& seen : observed) {
        const std::string kind = seen.evaluation["failure"].value("kind", "");
        const bool correct = seen.evaluation.value("correct", false);
        outcomes[std::string(variantName(seen.variant)) + " -> " +
                 (correct        ? "correct"
                  : kind.empty() ? "not verified"
                                 : kind) +
                 (seen.touchedByKill ? " (killed)" : "")]++;
        touched += seen.touchedByKill;
        EXPECT_FALSE(seen.evaluation.value("verdict", "").empty());
        if (seen.touchedByKill)
            continue;
        const std::string what =
            std::string(variantName(seen.variant)) + ": " + seen.evaluation.value("verdict", "");
        switch (seen.variant) {
        case Variant::Good:
            EXPECT_TRUE(correct) << what;
            break;
        case Variant::Wrong:
            EXPECT_FALSE(correct) << what;
            EXPECT_EQ(kind, "numerical_mismatch") << what;
            break;
        case Variant::Hang:
            EXPECT_EQ(kind, "timeout") << what;
            break;
        case Variant::Crash:
            EXPECT_EQ(kind, "crashed") << what;
            break;
        case Variant::Broken:
            EXPECT_FALSE(correct) << what;
            EXPECT_NE(kind, "") << what;
            break;
        }
    }

    // The database file is sound, seen through a connection of its own.
    store.reset();
    {
        sqlite::Database db((root_ / "soak.db").string(), /*create=*/false);
        sqlite::Query check = db.query("PRAGMA integrity_check");
        ASSERT_TRUE(check.step());
        EXPECT_EQ(check.text(0), "ok");
        sqlite::Query count = db.query("SELECT count(*), count(DISTINCT id) FROM episodes");
        ASSERT_TRUE(count.step());
        EXPECT_EQ(count.integer(0), static_cast<std::int64_t>(plan.episodes.size()));
        EXPECT_EQ(count.integer(1), count.integer(0));
    }

    // The next evaluation, with nothing killed, is fine; then nothing is left running.
    const fs::path after = makePythonWorkspace(
        kTinyTask, tinyCandidate("        return x * self.weight * self.factor"), "after");
    const EvaluationResult next = evaluateWorkspace(after, options);
    EXPECT_TRUE(next.correct) << describe(next);
    WarmWorkerPool::shared().shutdown();
    std::vector<std::string> leftover;
    for (int attempt = 0; attempt < 50; ++attempt) {
        leftover.clear();
        for (const ProcessEntry& process : descendants(getpid()))
            leftover.push_back(std::to_string(process.pid) + " " + process.name);
        // The scripted server is the one child the test keeps.
        if (leftover.size() <= 1)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_LE(leftover.size(), 1u) << ::testing::PrintToString(leftover);

    // The summary bench/soak.sh records.
    int serverKills = 0;
    for (const auto& kill : kills)
        serverKills += kill.workerServer;
    std::cout << "soak: " << evaluations << " evaluations in " << plan.episodes.size()
              << " episodes, " << wallSeconds << " s wall (" << wallSeconds / evaluations
              << " s per evaluation)\n"
              << "soak: " << plan.faultCount() << " LLM faults injected (" << plan.cutStreamCount()
              << " cut streams), " << kills.size() << " harness processes killed (" << serverKills
              << " warm worker servers or their bubblewrap), " << touched
              << " evaluations touched by a kill\n";
    for (const auto& [outcome, count] : outcomes)
        std::cout << "soak:   " << count << " x " << outcome << "\n";
}
