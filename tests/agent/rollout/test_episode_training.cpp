// `kwb train rft|grpo|value|ppo --config`: the settings file is read strictly (a typo or a
// setting of another algorithm is refused, never trained past), turned into kwb-model's command
// line, and a run without episodes, or a trainer that fails, says why. The training itself
// (kwb-model train on SmolLM2) runs in model.train_rl.
#include "agent/rollout/episode_training.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace kwb::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string refused(const json& settings, EpisodeTrainingAlgorithm algorithm) {
    std::string error;
    EXPECT_FALSE(EpisodeTrainingConfig::fromJson(settings, algorithm, &error).has_value());
    return error;
}

json minimal() {
    return {{"model", "m.gguf"}, {"out", "/tmp/run"}, {"run", 3}};
}

TEST(EpisodeTrainingConfig, TyposAndSettingsOfAnotherAlgorithmAreRefused) {
    const auto ppo = EpisodeTrainingAlgorithm::Ppo, rft = EpisodeTrainingAlgorithm::Rft;
    json s = minimal();
    s["learning_rat"] = 1e-4;
    EXPECT_EQ(refused(s, ppo), "unknown setting \"learning_rat\"");
    s = minimal();
    s["value_steps"] = 4;
    EXPECT_EQ(refused(s, EpisodeTrainingAlgorithm::Grpo),
              "\"value_steps\" is not a setting of grpo");
    s = minimal();
    s["clip_low"] = 0.2;
    EXPECT_EQ(refused(s, rft), "\"clip_low\" is not a setting of rft");
    s = minimal();
    s["min_reward"] = 2;
    EXPECT_NE(refused(s, ppo).find("trains on every scored episode"), std::string::npos);
    s = minimal();
    s["steps"] = -1;
    EXPECT_EQ(refused(s, ppo), "\"steps\" must be a whole number >= 0");
    s = minimal();
    s["full"] = "yes";
    EXPECT_EQ(refused(s, ppo), "\"full\" must be true or false");
    s = minimal();
    s["data"] = "rows.jsonl";
    EXPECT_NE(refused(s, ppo).find("one of the two"), std::string::npos);
    s = minimal();
    s.erase("run");
    EXPECT_NE(refused(s, ppo).find("one of the two"), std::string::npos);
    s = minimal();
    s.erase("model");
    EXPECT_NE(refused(s, ppo).find("no \"model\""), std::string::npos);
    s = minimal();
    s["device"] = "tpu";
    EXPECT_NE(refused(s, ppo).find("auto, cpu or cuda"), std::string::npos);
    EXPECT_EQ(refused(json::array(), ppo), "the settings are not a JSON object");
}

TEST(EpisodeTrainingConfig, BecomesKwbModelsCommandLine) {
    json s = minimal();
    s.update(json::parse(R"({"steps": 8, "batch_size": 4, "learning_rate": 0.0002, "full": false,
        "lora_targets": ["q_proj", "v_proj"], "clip_high": 0.28, "value_steps": 2,
        "checkpoint_in": "/tmp/value/checkpoint.pt", "gamma": 1.0})"));
    std::string error;
    const auto config = EpisodeTrainingConfig::fromJson(s, EpisodeTrainingAlgorithm::Ppo, &error);
    ASSERT_TRUE(config) << error;
    const auto argv = trainerArguments(*config, "/bin/kwb-model", "/tmp/run/data.jsonl", "cpu");
    const auto has = [&argv](const std::string& flag, const std::string& value) {
        const auto at = std::find(argv.begin(), argv.end(), flag);
        return at != argv.end() && at + 1 != argv.end() && *(at + 1) == value;
    };
    EXPECT_EQ(argv[0], "/bin/kwb-model");
    EXPECT_EQ(argv[1], "train");
    EXPECT_EQ(argv[2], "ppo");
    EXPECT_EQ(argv[3], "m.gguf");
    EXPECT_TRUE(has("--data", "/tmp/run/data.jsonl"));
    EXPECT_TRUE(has("--device", "cpu"));
    EXPECT_TRUE(has("--out", "/tmp/run/model"));
    EXPECT_TRUE(has("--steps-out", "/tmp/run/steps.jsonl"));
    EXPECT_TRUE(has("--checkpoint-out", "/tmp/run/checkpoint.pt"));
    EXPECT_TRUE(has("--steps", "8"));
    EXPECT_TRUE(has("--learning-rate", "0.0002"));
    EXPECT_TRUE(has("--lora-targets", "q_proj,v_proj"));
    EXPECT_TRUE(has("--clip-high", "0.28"));
    EXPECT_TRUE(has("--value-steps", "2"));
    EXPECT_TRUE(has("--checkpoint-in", "/tmp/value/checkpoint.pt"));
    EXPECT_EQ(std::count(argv.begin(), argv.end(), "--full"), 0) << "false leaves the flag out";

    // RFT is kwb-model's supervised fine-tuning; value pretraining saves no model, only the
    // checkpoint with its critic.
    auto rft = EpisodeTrainingConfig::fromJson(minimal(), EpisodeTrainingAlgorithm::Rft, &error);
    ASSERT_TRUE(rft) << error;
    EXPECT_EQ(trainerArguments(*rft, "k", "d", "cpu")[2], "sft");
    auto value =
        EpisodeTrainingConfig::fromJson(minimal(), EpisodeTrainingAlgorithm::Value, &error);
    ASSERT_TRUE(value) << error;
    const auto valueArgv = trainerArguments(*value, "k", "d", "cpu");
    EXPECT_EQ(std::count(valueArgv.begin(), valueArgv.end(), "--out"), 0);
    // The recorded settings read back as the same run.
    const auto again = EpisodeTrainingConfig::fromJson(
        [&] {
            json j = config->toJson();
            j.erase("algorithm");
            return j;
        }(),
        EpisodeTrainingAlgorithm::Ppo, &error);
    ASSERT_TRUE(again) << error;
    EXPECT_EQ(trainerArguments(*again, "k", "d", "cpu"),
              trainerArguments(*config, "k", "d", "cpu"));
}

class EpisodeTrainingRun : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("kwb-episode-training-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

TEST_F(EpisodeTrainingRun, ARunWithoutEpisodesOrAnOccupiedFolderSaysWhy) {
    json s = minimal();
    s["store"] = (dir_ / "store.db").string();
    s["out"] = (dir_ / "train").string();
    s["run"] = 7;
    std::string error;
    auto config = EpisodeTrainingConfig::fromJson(s, EpisodeTrainingAlgorithm::Grpo, &error);
    ASSERT_TRUE(config) << error;
    const EpisodeTrainingOutcome missing = runEpisodeTraining(*config, nullptr, {});
    EXPECT_NE(missing.error.find("7"), std::string::npos) << missing.error;
    // What it had was recorded; a second start in the same folder is refused, not mixed in.
    EXPECT_TRUE(fs::exists(dir_ / "train" / "config.json"));
    const EpisodeTrainingOutcome again = runEpisodeTraining(*config, nullptr, {});
    EXPECT_NE(again.error.find("exists and is not empty"), std::string::npos) << again.error;
}

TEST_F(EpisodeTrainingRun, ATrainerThatFailsIsQuotedAndItsStepsKept) {
    // A stand-in for kwb-model: writes one step line, complains, fails.
    const fs::path fake = dir_ / "fake-kwb-model";
    std::ofstream(fake)
        << "#!/bin/sh\n"
           "while [ $# -gt 0 ]; do [ \"$1\" = --steps-out ] && out=$2; shift; done\n"
           "echo '{\"event\":\"step\",\"step\":1,\"loss\":0.5}' >> \"$out\"\n"
           "echo 'out of memory on the second step' >&2\n"
           "exit 3\n";
    fs::permissions(fake, fs::perms::owner_all);
    std::ofstream(dir_ / "rows.jsonl") << "{\"messages\": []}\n\n{\"messages\": []}\n";
    json s = {{"model", "m.gguf"},
              {"out", (dir_ / "train").string()},
              {"data", (dir_ / "rows.jsonl").string()},
              {"device", "cpu"}};
    std::string error;
    auto config = EpisodeTrainingConfig::fromJson(s, EpisodeTrainingAlgorithm::Rft, &error);
    ASSERT_TRUE(config) << error;
    ::setenv("KWB_MODEL_WORKER", fake.c_str(), 1);
    std::vector<json> seen;
    const EpisodeTrainingOutcome outcome =
        runEpisodeTraining(*config, [&seen](const json& step) { seen.push_back(step); }, {});
    ::unsetenv("KWB_MODEL_WORKER");
    EXPECT_EQ(outcome.rows, 2);
    EXPECT_EQ(outcome.steps, 1);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0]["loss"], 0.5);
    EXPECT_NE(outcome.error.find("exit code 3"), std::string::npos) << outcome.error;
    EXPECT_NE(outcome.error.find("out of memory on the second step"), std::string::npos);
    const json summary = json::parse(std::ifstream(dir_ / "train" / "summary.json"));
    EXPECT_EQ(summary["steps"], 1);
    EXPECT_EQ(summary["last_step"]["loss"], 0.5);
}

} // namespace
} // namespace kwb::agent
