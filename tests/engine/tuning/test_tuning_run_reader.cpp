// A tuning run's folder read as the run writes it (TuningRunReader): steps with their sample
// rewards, phases computed from the samples, a line being written left for the next read, a
// malformed line passed over, a resumed run's rewritten samples read again from the start.
#include "engine/tuning/tuning_run_reader.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kwb::test {
namespace {

class TuningRunReaderTest : public ::testing::Test {
protected:
    void SetUp() override {
        folder_ = fs::temp_directory_path() /
                  ("kwb-tuning-read-" + std::to_string(std::random_device{}()));
        fs::create_directories(folder_);
        write("config.json",
              json{{"train", {"01_gelu"}}, {"held_out", {"07_scale_residual_add"}}, {"steps", 4}}
                  .dump());
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(folder_, ec);
    }
    void write(const std::string& name, const std::string& text) {
        std::ofstream(folder_ / name, std::ios::binary) << text;
    }
    void append(const std::string& name, const std::string& text) {
        std::ofstream(folder_ / name, std::ios::binary | std::ios::app) << text;
    }
    static std::string sample(const std::string& phase, int step, const std::string& space,
                              int reward, bool correct, double vsEager, double vsCompile) {
        return json{{"phase", phase},
                    {"step", step},
                    {"space", space},
                    {"action", "threads=" + std::to_string(64 << step)},
                    {"reward", reward},
                    {"correct", correct},
                    {"speedup_vs_eager", vsEager},
                    {"speedup_vs_compile", vsCompile},
                    {"verdict", correct ? "correct" : "wrong"}}
                   .dump() +
               "\n";
    }
    static std::string step(int number, double meanReward, double loss) {
        return json{{"step", number},
                    {"samples", 2},
                    {"mean_reward", meanReward},
                    {"pass_rate", 1.0},
                    {"faster_than_compile", 0.5},
                    {"speedup_vs_eager", 1.2},
                    {"update",
                     {{"loss", loss},
                      {"approximate_kl", 0.01},
                      {"entropy", 2.5},
                      {"clip_fraction", 0.02},
                      {"tokens_per_second", 900.0}}}}
                   .dump() +
               "\n";
    }
    fs::path folder_;
};

TEST_F(TuningRunReaderTest, StepsAndPhasesGrowAsTheRunWritesThem) {
    TuningRunReader reader(folder_.string());
    TuningRunSnapshotPtr empty = reader.read();
    EXPECT_TRUE(empty->error.empty()) << empty->error;
    EXPECT_TRUE(empty->steps.empty());
    EXPECT_EQ(empty->plannedSteps, 4);
    EXPECT_FALSE(empty->finished);

    // Before training: two samples on the training space, one on the held-out one (a failure).
    append("samples.jsonl", sample("start", 0, "01_gelu", 3, true, 2.0, 1.5) +
                                sample("start", 0, "01_gelu", 1, true, 0.5, 0.4) +
                                sample("start", 0, "07_scale_residual_add", -1, false, 0, 0));
    TuningRunSnapshotPtr start = reader.read();
    ASSERT_EQ(start->phases.size(), 2u);
    const TuningPhaseFigures& gelu = start->phases[0];
    EXPECT_EQ(gelu.space, "01_gelu");
    EXPECT_FALSE(gelu.heldOut);
    EXPECT_EQ(gelu.samples, 2);
    EXPECT_DOUBLE_EQ(gelu.meanReward, 2.0);
    EXPECT_DOUBLE_EQ(gelu.passRate, 1.0);
    EXPECT_DOUBLE_EQ(gelu.fasterThanCompile, 0.5);
    EXPECT_DOUBLE_EQ(gelu.speedupVsEager, 1.0); // the geometric mean of 2 and 0.5
    EXPECT_TRUE(start->phases[1].heldOut);
    EXPECT_DOUBLE_EQ(start->phases[1].passRate, 0.0);

    // Step 1's samples, its line, and step 2's line half written.
    append("samples.jsonl", sample("train", 1, "01_gelu", 1, true, 0.9, 0.8) +
                                sample("train", 1, "01_gelu", 2, true, 1.1, 1.2));
    const std::string second = step(2, 3.0, -0.2);
    append("steps.jsonl", step(1, 1.5, 0.1) + second.substr(0, 20));
    TuningRunSnapshotPtr one = reader.read();
    ASSERT_EQ(one->steps.size(), 1u);
    EXPECT_EQ(one->steps[0].step, 1);
    EXPECT_DOUBLE_EQ(one->steps[0].meanReward, 1.5);
    EXPECT_DOUBLE_EQ(one->steps[0].loss, 0.1);
    EXPECT_DOUBLE_EQ(one->steps[0].tokensPerSecond, 900.0);
    EXPECT_EQ(one->steps[0].rewards, (std::vector<int>{1, 2}));
    EXPECT_EQ(one->samples.size(), 5u);
    // The earlier snapshot is unchanged: snapshots are immutable.
    EXPECT_TRUE(start->steps.empty());

    // The rest of step 2's line, a malformed line, then the summary of a stopped run.
    append("steps.jsonl", second.substr(20) + "{not json\n");
    write("summary.json", json{{"stopped", true}}.dump());
    TuningRunSnapshotPtr two = reader.read();
    ASSERT_EQ(two->steps.size(), 2u);
    EXPECT_DOUBLE_EQ(two->steps[1].meanReward, 3.0);
    EXPECT_TRUE(two->steps[1].rewards.empty());
    EXPECT_EQ(two->skippedLines, 1);
    EXPECT_TRUE(two->finished);
    EXPECT_TRUE(two->stopped);
}

TEST_F(TuningRunReaderTest, ARewrittenSamplesFileIsReadAgainFromTheStart) {
    append("samples.jsonl", sample("start", 0, "01_gelu", 1, true, 1.0, 1.0) +
                                sample("train", 1, "01_gelu", 2, true, 1.0, 1.0) +
                                sample("train", 2, "01_gelu", 3, true, 1.0, 1.0));
    TuningRunReader reader(folder_.string());
    EXPECT_EQ(reader.read()->samples.size(), 3u);
    // A resume keeps the rows of finished steps only.
    write("samples.jsonl", sample("start", 0, "01_gelu", 1, true, 1.0, 1.0));
    TuningRunSnapshotPtr again = reader.read();
    EXPECT_EQ(again->samples.size(), 1u);
    EXPECT_TRUE(again->steps.empty());
    EXPECT_EQ(again->phases.size(), 1u);
    EXPECT_EQ(again->phases[0].samples, 1);
}

TEST_F(TuningRunReaderTest, ASamplesFileRenamedOverIsReadAgainEvenWhenLonger) {
    // A resume renames a fresh samples.jsonl over the old one, and the resumed run appends to
    // it: by the next read it can be longer than what was read of the old file.
    append("samples.jsonl", sample("start", 0, "01_gelu", 1, true, 1.0, 1.0));
    TuningRunReader reader(folder_.string());
    EXPECT_EQ(reader.read()->samples.size(), 1u);
    write("samples.jsonl.part", sample("start", 0, "01_gelu", 3, true, 1.0, 1.0) +
                                    sample("start", 0, "03_softmax", 1, true, 1.0, 1.0) +
                                    sample("train", 1, "01_gelu", 2, true, 1.0, 1.0));
    fs::rename(folder_ / "samples.jsonl.part", folder_ / "samples.jsonl");
    const TuningRunSnapshotPtr again = reader.read();
    ASSERT_EQ(again->samples.size(), 3u);
    EXPECT_EQ(again->samples[0].reward, 3) << "the old file's row is not counted twice";
    ASSERT_EQ(again->phases.size(), 2u);
    for (const TuningPhaseFigures& phase : again->phases)
        EXPECT_EQ(phase.samples, 1) << phase.space;
}

TEST_F(TuningRunReaderTest, AFolderThatIsNotThereSaysSo) {
    TuningRunReader reader((folder_ / "missing").string());
    EXPECT_NE(reader.read()->error.find("is not a folder"), std::string::npos);
}

} // namespace
} // namespace kwb::test
