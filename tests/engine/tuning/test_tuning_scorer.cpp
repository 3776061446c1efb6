// The real tuning scorer (the evaluation service) in CPU mode, where a fast-path kernel compiles
// with NVRTC but cannot run: a compile failure is a measured reward of -1, a kernel that
// compiled is an infrastructure failure ("no_gpu"), so both kinds of answer can be told apart
// and checked against the action that asked. A scratch copy of the gelu space gets a knob that
// breaks the compile.
#include "engine/service/evaluation_service.h"
#include "engine/system/resource_paths.h"
#include "engine/tuning/kernel_tuning_run.h"
#include "engine/tuning/tuning_scorer.h"
#include "tests/test_files.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <random>

namespace kwb::test {
namespace {

namespace fs = std::filesystem;

class TuningScorerTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::random_device device;
        root_ = fs::temp_directory_path() / ("kwb-scorer-" + std::to_string(device()));
        const fs::path space = root_ / "spaces" / "01_gelu";
        fs::create_directories(space.parent_path());
        fs::copy(fs::path(bundledTuningDirectory()) / "01_gelu", space,
                 fs::copy_options::recursive);
        std::string json = readText(space / "tuning.json");
        const std::string knobs = "\"knobs\": [";
        json.insert(json.find(knobs) + knobs.size(),
                    "{\"name\": \"sabotage\", \"choices\": [\"no\", \"yes\"], \"about\": "
                    "\"yes: the kernel does not compile\"},");
        writeText(space / "tuning.json", json);
        writeText(
            space / "kernels" / "gelu.cu",
            "#define SABOTAGE_{{sabotage}} 1\n#ifdef SABOTAGE_yes\n#error sabotaged\n#endif\n" +
                readText(space / "kernels" / "gelu.cu"));
        std::string error;
        auto spaces = loadTuningSpaces((root_ / "spaces").string(), {"01_gelu"},
                                       bundledTasksDirectory(), &error);
        ASSERT_TRUE(spaces) << error;
        space_ = spaces->front();
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }

    TuningSpace::Action action(const std::string& text) const {
        const auto parsed = space_.parseAction(text);
        EXPECT_TRUE(parsed) << text;
        return parsed.value_or(TuningSpace::Action{});
    }
    EvaluationOptions options() const {
        TuningRunConfig config;
        config.trainSpaces = {"01_gelu"};
        return tuningEvaluationOptions(config, DeviceChoice::Auto);
    }

    fs::path root_;
    TuningSpace space_;
};

TEST_F(TuningScorerTest, AGroupIsScoredSideBySideInSlotsAndEachScoreBelongsToItsAction) {
    EvaluationService service({.python = "", .concurrentEvaluations = 3, .gpuCount = 0});
    EvaluationScorer scorer(service, options(), (root_ / "workspaces").string(), 3);
    const std::string rest = " vec=4 unroll=1 grid=cover math=fast";
    const std::vector<TuningSpace::Action> group = {
        action("sabotage=yes threads=64" + rest), action("sabotage=no threads=64" + rest),
        action("sabotage=yes threads=64" + rest), action("sabotage=no threads=128" + rest),
        action("sabotage=yes threads=256" + rest)};
    const std::vector<TuningScore> scores = scorer.scoreAll(space_, group, {});
    ASSERT_EQ(scores.size(), group.size());
    for (const int broken : {0, 4}) {
        EXPECT_TRUE(scores[broken].measured) << scores[broken].error;
        EXPECT_EQ(scores[broken].reward, -1);
        EXPECT_NE(scores[broken].verdict.find("compile"), std::string::npos)
            << scores[broken].verdict;
        EXPECT_FALSE(scores[broken].reused);
        EXPECT_GT(scores[broken].seconds, 0.0);
    }
    for (const int compiled : {1, 3}) {
        EXPECT_FALSE(scores[compiled].measured);
        EXPECT_EQ(scores[compiled].error.rfind("no_gpu", 0), 0u) << scores[compiled].error;
    }
    // The repeat inside the group was not evaluated again: it carries the first one's answer.
    EXPECT_TRUE(scores[2].reused);
    EXPECT_EQ(scores[2].verdict, scores[0].verdict);
    EXPECT_EQ(scores[2].seconds, 0.0);
    // Four distinct actions, three slots: each slot has its own workspace, all three used.
    for (const char* slot : {"01_gelu", "01_gelu-2", "01_gelu-3"})
        EXPECT_TRUE(fs::exists(root_ / "workspaces" / slot / "kernels" / "gelu.cu")) << slot;
    EXPECT_FALSE(fs::exists(root_ / "workspaces" / "01_gelu-4"));
    // Measured answers are kept (the two compile failures); asking again evaluates nothing.
    EXPECT_EQ(scorer.measuredActions(), 2u);
    const TuningScore again = scorer.score(space_, group[4], {});
    EXPECT_TRUE(again.reused);
    EXPECT_EQ(again.verdict, scores[4].verdict);
    EXPECT_EQ(service.running(), 0u);
    EXPECT_EQ(service.queued(), 0u);
}

TEST_F(TuningScorerTest, AStoppedRunScoresNothingMoreAndSaysSo) {
    EvaluationService service({.python = "", .concurrentEvaluations = 2, .gpuCount = 0});
    EvaluationScorer scorer(service, options(), (root_ / "workspaces").string(), 2);
    std::stop_source stop;
    stop.request_stop();
    const std::vector<TuningScore> scores =
        scorer.scoreAll(space_,
                        {action("sabotage=yes threads=64 vec=1 unroll=1 grid=cover math=fast"),
                         action("sabotage=yes threads=128 vec=1 unroll=1 grid=cover math=fast")},
                        stop.get_token());
    for (const TuningScore& s : scores) {
        EXPECT_FALSE(s.measured);
        EXPECT_EQ(s.error.rfind("cancelled", 0), 0u) << s.error;
    }
    EXPECT_EQ(scorer.measuredActions(), 0u);
    EXPECT_FALSE(fs::exists(root_ / "workspaces")) << "nothing was written for a stopped run";
}

} // namespace
} // namespace kwb::test
