#include "agent/store/episode_export.h"
#include "agent/store/trajectory_store.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <unistd.h>

using namespace kwb::agent;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

EpisodeOutcome finished(double reward, json evaluation) {
    EpisodeOutcome outcome;
    outcome.reward = reward;
    outcome.finalEvaluation = std::move(evaluation);
    return outcome;
}

class EpisodeExportTest : public testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "kwb-export-XXXXXX").string();
        ASSERT_NE(mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::unique_ptr<TrajectoryStore> open(const std::string& name,
                                          TrajectoryStoreOptions options = {}) {
        auto store = TrajectoryStore::open((dir_ / name).string(), std::move(options));
        EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
        return store.ok() ? std::move(store).value() : nullptr;
    }

    // A finished episode with a conversation, a tool call, an evaluation and a diff, and a
    // fork of it.
    std::vector<EpisodeId> fillSample(TrajectoryStore& store) {
        EpisodeRecord record;
        record.task = "tasks/05_gemm_bias_relu.py";
        record.provider = "anthropic at https://api.anthropic.com";
        record.model = "claude";
        record.settings = {{"temperature", 0.25}, {"max_turns", 12}};
        const EpisodeId id = store.createEpisode(record).value().id;
        const auto add = [&](EpisodeId episode, EventKind kind, json payload) {
            EXPECT_TRUE(store.appendEvent(episode, kind, std::move(payload)).ok());
        };
        add(id, EventKind::SystemPrompt, messageToJson(Message::system("Write fast CUDA.")));
        add(id, EventKind::UserMessage, messageToJson(Message::user("Optimise the GEMM.")));
        add(id, EventKind::AssistantMessage,
            messageToJson(Message::assistant(
                "Let me write a kernel.",
                {{"toolu_1", "write_file", R"({"path":"kernel.cu","text":"__global__..."})"}})));
        add(id, EventKind::ToolCall, {{"id", "toolu_1"}, {"name", "write_file"}});
        add(id, EventKind::FileDiff, {{"path", "kernel.cu"}, {"diff", "+__global__ void k()"}});
        add(id, EventKind::ToolResult, messageToJson(Message::toolResult("toolu_1", "written")));
        add(id, EventKind::Evaluation, {{"reward", 2}, {"speedup_vs_eager", 1.4142135623730951}});
        add(id, EventKind::Steering, {{"action", "hint"}, {"text", "try shared memory"}});
        record = store.loadEpisode(id).value();
        record.usage = {5000, 800, 4096};
        record.costUsd = 0.0421;
        EXPECT_TRUE(store.updateEpisode(record).ok());
        EXPECT_TRUE(store.finishEpisode(id, finished(2.0, {{"correct", true}})).ok());
        const EpisodeId fork = store.forkEpisode(id, 3).value().id;
        add(fork, EventKind::UserMessage, messageToJson(Message::user("Try tensor cores.")));
        return {id, fork};
    }

    fs::path dir_;
};

std::vector<EpisodeTrajectory> load(const TrajectoryStore& store,
                                    const std::vector<EpisodeId>& ids) {
    std::vector<EpisodeTrajectory> out;
    for (EpisodeId id : ids)
        out.push_back(store.loadTrajectory(id).value());
    return out;
}

} // namespace

TEST_F(EpisodeExportTest, ExportThenImportKeepsEverything) {
    auto source = open("source.db");
    ASSERT_TRUE(source);
    const auto ids = fillSample(*source);
    std::stringstream jsonl;
    auto exported = exportEpisodes(*source, ids, jsonl);
    ASSERT_TRUE(exported.ok()) << exported.error().message;
    EXPECT_EQ(exported.value(), 2u);
    const std::string text = jsonl.str();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
    // Every line names its format in its first bytes (the MIME type's magic matches them).
    const std::string prefix = R"({"format":"kwb.episode","format_version":)";
    for (std::size_t at = 0; at < text.size(); at = text.find('\n', at) + 1)
        EXPECT_EQ(text.compare(at, prefix.size(), prefix), 0) << text.substr(at, 60);

    // Into an empty store, keeping the ids: the same episodes, field for field.
    auto copy = open("copy.db");
    ASSERT_TRUE(copy);
    std::istringstream in(text);
    auto imported = importEpisodes(*copy, in, ImportIds::KeepWhenFree);
    ASSERT_TRUE(imported.ok()) << imported.error().message;
    ASSERT_EQ(imported.value().size(), 2u);
    EXPECT_EQ(load(*copy, ids), load(*source, ids));

    // Into a store whose ids are taken: new ids, the fork still linked to its parent.
    auto busy = open("busy.db");
    ASSERT_TRUE(busy);
    fillSample(*busy);
    std::istringstream again(text);
    auto renumbered = importEpisodes(*busy, again, ImportIds::KeepWhenFree);
    ASSERT_TRUE(renumbered.ok()) << renumbered.error().message;
    const EpisodeRecord& parent = renumbered.value()[0];
    const EpisodeRecord& fork = renumbered.value()[1];
    EXPECT_NE(parent.id, ids[0]);
    EXPECT_EQ(fork.parentId, parent.id);
    EXPECT_EQ(fork.forkSequence, 3);
    auto original = source->loadTrajectory(ids[0]).value();
    auto reimported = busy->loadTrajectory(parent.id).value();
    original.episode.id = reimported.episode.id;
    for (auto& event : original.events)
        event.episodeId = reimported.episode.id;
    EXPECT_EQ(reimported, original);
    // Appending continues after the imported steps.
    EXPECT_EQ(busy->appendEvent(fork.id, EventKind::Steering, {}).value().sequence, 5);
}

TEST_F(EpisodeExportTest, FileExportIsWholeOrAbsent) {
    auto store = open("store.db");
    ASSERT_TRUE(store);
    const auto ids = fillSample(*store);
    const fs::path file = dir_ / "episodes.jsonl";
    ASSERT_TRUE(exportEpisodes(*store, ids, file).ok());
    auto copy = open("copy.db");
    auto imported = importEpisodes(*copy, file);
    ASSERT_TRUE(imported.ok()) << imported.error().message;
    EXPECT_EQ(imported.value().size(), 2u);

    const fs::path failed = dir_ / "failed.jsonl";
    auto missing = exportEpisodes(*store, {ids[0], 999}, failed);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message,
              "cannot export: cannot load episode 999: there is no such episode");
    EXPECT_FALSE(fs::exists(failed));
    EXPECT_FALSE(fs::exists(dir_ / "failed.jsonl.partial"));
}

TEST_F(EpisodeExportTest, AMalformedLineIsNamedAndNothingIsImported) {
    auto source = open("source.db");
    ASSERT_TRUE(source);
    std::stringstream jsonl;
    ASSERT_TRUE(exportEpisodes(*source, fillSample(*source), jsonl).ok());
    std::string good;
    std::getline(jsonl, good);

    auto target = open("target.db");
    ASSERT_TRUE(target);
    const auto importText = [&](const std::string& text) {
        std::istringstream in(text);
        return importEpisodes(*target, in);
    };

    auto broken = importText(good + "\n\n" + good.substr(0, good.size() / 2) + "\n");
    ASSERT_FALSE(broken.ok());
    EXPECT_EQ(broken.error().message.rfind("cannot import: line 3: not valid JSON", 0), 0u)
        << broken.error().message;

    json badKind = json::parse(good);
    badKind["events"][1]["kind"] = "telepathy";
    auto unknown = importText(good + "\n" + badKind.dump() + "\n");
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().message,
              "cannot import: line 2: event 2: unknown event kind \"telepathy\"");

    json newer = json::parse(good);
    newer["format_version"] = kEpisodeExportVersion + 1;
    auto future = importText(newer.dump());
    ASSERT_FALSE(future.ok());
    EXPECT_NE(future.error().message.find("line 1: format version 2 is newer"), std::string::npos)
        << future.error().message;

    json noTask = json::parse(good);
    noTask["episode"].erase("task");
    auto missingTask = importText(good + "\n" + noTask.dump());
    ASSERT_FALSE(missingTask.ok());
    EXPECT_EQ(missingTask.error().message, "cannot import: line 2: episode: \"task\" is missing");

    json reordered = json::parse(good);
    std::swap(reordered["events"][0], reordered["events"][1]);
    auto outOfOrder = importText(reordered.dump());
    ASSERT_FALSE(outOfOrder.ok());
    EXPECT_NE(outOfOrder.error().message.find("line 1: event 2: sequence 1 does not follow 2"),
              std::string::npos)
        << outOfOrder.error().message;

    // Numbers out of range are errors, not aborts (nlohmann throws out_of_range for a number
    // beyond a double) and not silent truncation (turns is 32 bits, ids 64 bits).
    std::string hugeNumber = good;
    hugeNumber.insert(hugeNumber.find("\"turns\":") + 8, "9e999999999,\"x\":");
    auto overflow = importText(hugeNumber);
    ASSERT_FALSE(overflow.ok());
    EXPECT_EQ(overflow.error().message,
              "cannot import: line 1: not valid JSON (a number out of range)");
    json manyTurns = json::parse(good);
    manyTurns["episode"]["turns"] = std::int64_t{1} << 40;
    auto tooManyTurns = importText(manyTurns.dump());
    ASSERT_FALSE(tooManyTurns.ok());
    EXPECT_EQ(tooManyTurns.error().message,
              "cannot import: line 1: episode: \"turns\" must be an integer of 32 bits");
    json bigId = json::parse(good);
    bigId["episode"]["id"] = std::uint64_t{1} << 63;
    auto idTooBig = importText(bigId.dump());
    ASSERT_FALSE(idTooBig.ok());
    EXPECT_EQ(idTooBig.error().message,
              "cannot import: line 1: episode: \"id\" must be an integer of 64 bits");

    auto notOurs = importText(R"({"hello": "world"})");
    ASSERT_FALSE(notOurs.ok());
    EXPECT_NE(notOurs.error().message.find("line 1: not a Kernel Workbench episode"),
              std::string::npos);

    // Each failure above came after at least one valid line: none of them left anything.
    EXPECT_TRUE(target->listEpisodes().value().empty());
}

TEST_F(EpisodeExportTest, FileDiffPathsOutsideTheWorkspaceAreRefused) {
    auto source = open("source.db");
    ASSERT_TRUE(source);
    std::stringstream jsonl;
    ASSERT_TRUE(exportEpisodes(*source, fillSample(*source), jsonl).ok());
    std::string good;
    std::getline(jsonl, good);
    auto target = open("target.db");
    ASSERT_TRUE(target);
    const json sample = json::parse(good);
    std::size_t diffIndex = 0;
    while (sample["events"][diffIndex]["kind"] != "file_diff")
        ++diffIndex;
    // A fork writes these paths into its workspace: every escape and protected file is refused.
    for (const std::string path : {"../../x", "/abs/x", "kernels/../../x", "", "utils/common.py",
                                   "model.py", "binding.cpp", "a//b"}) {
        json line = sample;
        line["events"][diffIndex]["payload"]["path"] = path;
        std::istringstream in(line.dump());
        auto imported = importEpisodes(*target, in);
        ASSERT_FALSE(imported.ok()) << path;
        EXPECT_NE(imported.error().message.find("event " + std::to_string(diffIndex + 1) + ": "),
                  std::string::npos)
            << imported.error().message;
    }
    json noPath = sample;
    noPath["events"][diffIndex]["payload"].erase("path");
    std::istringstream in(noPath.dump());
    EXPECT_FALSE(importEpisodes(*target, in).ok());
    EXPECT_TRUE(target->listEpisodes().value().empty());
}

TEST_F(EpisodeExportTest, DeeplyNestedLinesAreRefusedNotCrashed) {
    auto target = open("target.db");
    ASSERT_TRUE(target);
    std::istringstream in(std::string(100000, '[') + std::string(100000, ']') + "\n");
    auto imported = importEpisodes(*target, in);
    ASSERT_FALSE(imported.ok());
    EXPECT_NE(imported.error().message.find("line 1: JSON nested deeper than"), std::string::npos)
        << imported.error().message;
}

TEST_F(EpisodeExportTest, TheExportScrubsKeysTheFileAlreadyHeld) {
    const std::string key = "sk-ant-api03-EXPORTSECRET-123456";
    EpisodeId id = 0;
    {
        // A store that did not know the key: it reached the file.
        auto careless = open("store.db");
        ASSERT_TRUE(careless);
        EpisodeRecord record;
        record.task = "t";
        record.settings = {{"key", key}};
        id = careless->createEpisode(record).value().id;
        ASSERT_TRUE(careless->appendEvent(id, EventKind::Error, {{"message", "echo " + key}}).ok());
    }
    TrajectoryStoreOptions knowsTheKey;
    knowsTheKey.secrets = {key};
    auto store = open("store.db", knowsTheKey);
    ASSERT_TRUE(store);
    std::stringstream jsonl;
    ASSERT_TRUE(exportEpisodes(*store, {id}, jsonl).ok());
    EXPECT_EQ(jsonl.str().find(key), std::string::npos);
    EXPECT_NE(jsonl.str().find("echo [redacted]"), std::string::npos);

    // A line that still holds the key, imported into a store that knows it: scrubbed on the
    // way in.
    EpisodeTrajectory trajectory = store->loadTrajectory(id).value();
    trajectory.events[0].payload["message"] = key;
    std::istringstream in(toExportLine(trajectory).dump());
    auto target = open("target.db", knowsTheKey);
    ASSERT_TRUE(importEpisodes(*target, in).ok());
    target.reset();
    std::ifstream bytes(dir_ / "target.db", std::ios::binary);
    const std::string content{std::istreambuf_iterator<char>(bytes),
                              std::istreambuf_iterator<char>()};
    EXPECT_EQ(content.find(key), std::string::npos);
    EXPECT_NE(content.find("[redacted]"), std::string::npos);
}

TEST_F(EpisodeExportTest, MessagesWithToolCallsRoundTripThroughJson) {
    const Message message = Message::assistant(
        "two calls", {{"a", "compile", R"({"x":1})"}, {"b", "profile", "not json {"}});
    Message back;
    ASSERT_TRUE(messageFromJson(messageToJson(message), back));
    EXPECT_EQ(back, message);
    const Message result = Message::toolResult("a", "boom", /*isError=*/true);
    ASSERT_TRUE(messageFromJson(messageToJson(result), back));
    EXPECT_EQ(back, result);
    std::string error;
    EXPECT_FALSE(messageFromJson(json{{"role", "robot"}}, back, &error));
    EXPECT_EQ(error, "unknown role \"robot\"");
}
