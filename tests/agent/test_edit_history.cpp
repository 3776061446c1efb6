// The hand-edit history: evaluations appended with the files they judged read back as an episode
// whose steps rebuild every evaluated state, torn or foreign lines skipped, and one file per
// workspace.
#include "agent/store/edit_history.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

using namespace kwb::agent;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class EditHistoryTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kwb-edit-history-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "ws" / "kernels");
        workspace_ = (dir_ / "ws").string();
        file_ = editHistoryFile((dir_ / "history").string(), workspace_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    static json evaluation(int reward, double speedup) {
        return {{"reward", reward}, {"correct", reward >= 1}, {"speedup_vs_eager", speedup}};
    }
    void append(const kwb::WorkspaceFiles& files, const json& result, const char* time) {
        std::string error;
        ASSERT_TRUE(appendEditHistory(file_, workspace_, files, result, time, &error)) << error;
    }
    std::vector<const EpisodeEvent*> eventsOf(const EditHistory& history, EventKind kind) {
        std::vector<const EpisodeEvent*> out;
        for (const EpisodeEvent& e : history.trajectory.events)
            if (e.kind == kind)
                out.push_back(&e);
        return out;
    }

    fs::path dir_;
    std::string workspace_;
    std::string file_;
};

} // namespace

TEST_F(EditHistoryTest, noFileIsAnEmptyHistoryOfTheWorkspace) {
    const EditHistory history = readEditHistory(file_, workspace_);
    EXPECT_TRUE(history.error.empty());
    EXPECT_EQ(history.evaluations, 0);
    EXPECT_TRUE(history.trajectory.events.empty());
    EXPECT_EQ(history.trajectory.episode.id, kEditHistoryEpisodeId);
    EXPECT_EQ(history.trajectory.episode.provider, kEditHistoryProvider);
    EXPECT_EQ(history.trajectory.episode.settings.value("workspace", ""),
              fs::absolute(workspace_).lexically_normal().generic_string());
}

TEST_F(EditHistoryTest, evaluationsReadBackAsStepsWithTheFilesTheyJudged) {
    append({{"model_new.py", "m1\n"}, {"kernels/a.cu", "k1\n"}}, evaluation(-1, 0), "t1");
    // Only the kernel changed; then the model changed, a header appeared and the kernel went.
    append({{"model_new.py", "m1\n"}, {"kernels/a.cu", "k2\n"}}, evaluation(1, 0.9), "t2");
    append({{"model_new.py", "m2\n"}, {"kernels/b.cuh", "h\n"}}, evaluation(3, 1.7), "t3");

    const EditHistory history = readEditHistory(file_, workspace_);
    ASSERT_TRUE(history.error.empty()) << history.error;
    EXPECT_EQ(history.evaluations, 3);
    EXPECT_EQ(history.skippedLines, 0);
    const auto evaluations = eventsOf(history, EventKind::Evaluation);
    ASSERT_EQ(evaluations.size(), 3u);
    EXPECT_EQ(evaluations[2]->payload["reward"], 3);
    EXPECT_EQ(evaluations[2]->payload["trigger"], "hand edit");
    EXPECT_EQ(evaluations[0]->timestamp, "t1");

    const auto diffs = eventsOf(history, EventKind::FileDiff);
    // 2 initial files, 1 kernel change, model + header + the kernel's removal.
    ASSERT_EQ(diffs.size(), 6u);
    EXPECT_TRUE(diffs[0]->payload.value("initial", false));
    EXPECT_TRUE(diffs[1]->payload.value("initial", false));
    EXPECT_EQ(diffs[2]->payload["path"], "kernels/a.cu");
    EXPECT_EQ(diffs[2]->payload["before"], "k1\n");
    EXPECT_EQ(diffs[2]->payload["after"], "k2\n");
    EXPECT_NE(diffs[2]->payload["diff"].get<std::string>().find("+k2"), std::string::npos);
    EXPECT_FALSE(diffs[2]->payload.value("initial", false));
    const EpisodeEvent* removal = diffs[5];
    EXPECT_EQ(removal->payload["path"], "kernels/a.cu");
    EXPECT_TRUE(removal->payload["after"].is_null());

    // Sequences run 1..n in order, each evaluation after the files it judged.
    std::int64_t expected = 1;
    for (const EpisodeEvent& e : history.trajectory.events)
        EXPECT_EQ(e.sequence, expected++);
    EXPECT_EQ(history.trajectory.episode.lastSequence, expected - 1);
    EXPECT_LT(diffs[2]->sequence, evaluations[1]->sequence);
    EXPECT_GT(diffs[3]->sequence, evaluations[1]->sequence);
    EXPECT_EQ(history.trajectory.episode.startedAt, "t1");
}

TEST_F(EditHistoryTest, tornForeignAndMalformedLinesAreSkippedNotFatal) {
    append({{"model_new.py", "m1\n"}}, evaluation(1, 1.0), "t1");
    {
        std::ofstream out(file_, std::ios::app);
        out << "{\"version\":1,\"workspace\":\"/elsewhere\",\"files\":{},\"evaluation\":{}}\n";
        out << "not json at all\n";
        out << "{\"version\":1,\"workspace\":"
            << json(fs::absolute(workspace_).lexically_normal().generic_string()).dump()
            << ",\"files\":{\"model_new.py\":7},\"evaluation\":{}}\n";
    }
    append({{"model_new.py", "m2\n"}}, evaluation(2, 1.2), "t2");
    {
        std::ofstream out(file_, std::ios::app);
        out << "{\"version\":1,\"workspace\":"; // a crash mid-write: a torn last line
    }
    const EditHistory history = readEditHistory(file_, workspace_);
    EXPECT_TRUE(history.error.empty());
    EXPECT_EQ(history.evaluations, 2);
    EXPECT_EQ(history.skippedLines, 4);
    // An evaluation appended after the torn line is kept: the torn line is ended first.
    append({{"model_new.py", "m3\n"}}, evaluation(3, 1.5), "t3");
    const EditHistory after = readEditHistory(file_, workspace_);
    EXPECT_EQ(after.evaluations, 3);
    EXPECT_EQ(after.skippedLines, 4);
}

TEST_F(EditHistoryTest, eachWorkspaceHasItsOwnFile) {
    fs::create_directories(dir_ / "other");
    const std::string other =
        editHistoryFile((dir_ / "history").string(), (dir_ / "other").string());
    EXPECT_NE(other, file_);
    // The same folder named two ways is one history.
    EXPECT_EQ(editHistoryFile((dir_ / "history").string(), workspace_ + "/."), file_);
    append({{"model_new.py", "m\n"}}, evaluation(1, 1.0), "t1");
    EXPECT_EQ(readEditHistory(other, (dir_ / "other").string()).evaluations, 0);
}

TEST_F(EditHistoryTest, anUnwritableHistorySaysWhy) {
    fs::create_directories(dir_ / "blocked");
    const std::string file = (dir_ / "blocked").string(); // a folder where the file should be
    std::string error;
    EXPECT_FALSE(appendEditHistory(file, workspace_, {{"model_new.py", "m"}}, evaluation(1, 1), "t",
                                   &error));
    EXPECT_NE(error.find("cannot"), std::string::npos) << error;
    const EditHistory history = readEditHistory(file, workspace_);
    EXPECT_EQ(history.evaluations, 0);
}

// The reader the Rewards plot refreshes through: each read takes only the lines appended since
// the last, and its result is the one a fresh read of the whole file gives.
TEST_F(EditHistoryTest, aGrowingHistoryIsReadFromWhereTheLastReadStopped) {
    EditHistoryReader reader(file_, workspace_);
    EXPECT_EQ(reader.read().evaluations, 0);
    append({{"model_new.py", "m1\n"}, {"kernels/a.cu", "k1\n"}}, evaluation(-1, 0), "t1");
    EXPECT_EQ(reader.read().evaluations, 1);
    const std::uint64_t afterFirst = reader.consumedBytes();
    EXPECT_EQ(afterFirst, fs::file_size(file_));
    append({{"model_new.py", "m1\n"}, {"kernels/a.cu", "k2\n"}}, evaluation(1, 0.9), "t2");
    {
        std::ofstream out(file_, std::ios::app);
        out << "not json\n";
    }
    append({{"model_new.py", "m2\n"}}, evaluation(3, 1.7), "t3");
    const EditHistory grown = reader.read();
    EXPECT_GT(reader.consumedBytes(), afterFirst);
    const EditHistory whole = readEditHistory(file_, workspace_);
    EXPECT_EQ(grown.evaluations, 3);
    EXPECT_EQ(grown.skippedLines, 1);
    ASSERT_EQ(grown.trajectory.events.size(), whole.trajectory.events.size());
    for (std::size_t i = 0; i < whole.trajectory.events.size(); ++i) {
        EXPECT_EQ(grown.trajectory.events[i].sequence, whole.trajectory.events[i].sequence);
        EXPECT_EQ(grown.trajectory.events[i].payload, whole.trajectory.events[i].payload) << i;
    }
    EXPECT_EQ(grown.trajectory.episode.lastSequence, whole.trajectory.episode.lastSequence);
    // Nothing new: the same history again.
    EXPECT_EQ(reader.read().trajectory.events.size(), whole.trajectory.events.size());
}

// A line being written (or torn by a crash) is not consumed half: once it is complete it is read.
TEST_F(EditHistoryTest, anUnfinishedLastLineIsReadOnceItEnds) {
    EditHistoryReader reader(file_, workspace_);
    append({{"model_new.py", "m1\n"}}, evaluation(1, 1.0), "t1");
    const std::string line = [&] {
        const std::string other = (dir_ / "scratch.jsonl").string();
        std::string error;
        EXPECT_TRUE(appendEditHistory(other, workspace_, {{"model_new.py", "m2\n"}},
                                      evaluation(2, 1.2), "t2", &error));
        std::ifstream in(other);
        std::string text;
        std::getline(in, text);
        return text;
    }();
    {
        std::ofstream out(file_, std::ios::app);
        out << line.substr(0, line.size() / 2);
    }
    const EditHistory partial = reader.read();
    EXPECT_EQ(partial.evaluations, 1);
    EXPECT_EQ(partial.skippedLines, 1); // shown as skipped while it is unfinished
    {
        std::ofstream out(file_, std::ios::app);
        out << line.substr(line.size() / 2) << "\n";
    }
    const EditHistory finished = reader.read();
    EXPECT_EQ(finished.evaluations, 2);
    EXPECT_EQ(finished.skippedLines, 0);
}

// A history replaced (another file in its place) or cut shorter is read again from its start.
TEST_F(EditHistoryTest, aReplacedOrTruncatedHistoryIsReadAfresh) {
    EditHistoryReader reader(file_, workspace_);
    append({{"model_new.py", "m1\n"}}, evaluation(1, 1.0), "t1");
    append({{"model_new.py", "m2\n"}}, evaluation(2, 1.2), "t2");
    EXPECT_EQ(reader.read().evaluations, 2);
    fs::remove(file_);
    EXPECT_EQ(reader.read().evaluations, 0);
    append({{"model_new.py", "m3\n"}}, evaluation(3, 1.5), "t3");
    const EditHistory fresh = reader.read();
    EXPECT_EQ(fresh.evaluations, 1);
    EXPECT_EQ(fresh.trajectory.episode.startedAt, "t3");
    EXPECT_EQ(fresh.trajectory.events.front().sequence, 1);
    {
        std::ofstream out(file_, std::ios::trunc); // the same file, emptied
    }
    EXPECT_EQ(reader.read().evaluations, 0);
    append({{"model_new.py", "m4\n"}}, evaluation(1, 0.5), "t4");
    EXPECT_EQ(reader.read().trajectory.episode.startedAt, "t4");
}
