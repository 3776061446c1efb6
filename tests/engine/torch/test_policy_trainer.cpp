// Local training on a small Llama initialised from scratch (the same code trains SmolLM2): a
// fresh LoRA adapter changes nothing, supervised steps learn a sequence while the base weights
// stay as they were, merging gives the adapted model's logits, GRPO and PPO steps on the model's
// own samples raise the reward, and value pretraining fits the critic to the returns.
#include "engine/torch/llama_model.h"
#include "engine/torch/llama_network.h"
#include "engine/torch/policy_trainer.h"
#include "tests/engine/torch/sampled_episodes.h"
#include "tests/engine/torch/tiny_llama.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace kwb::torchnn {
namespace {

using tiny::sampledEpisodes;
using tiny::sequence;
using tiny::tinyModel;

double maxDifference(const std::vector<float>& a, const std::vector<float>& b) {
    EXPECT_EQ(a.size(), b.size());
    double worst = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        worst = std::max(worst, double(std::abs(a[i] - b[i])));
    return worst;
}

double meanRewardOf(const std::vector<TrainingSequence>& batch) {
    double total = 0;
    for (const auto& s : batch)
        total += s.reward;
    return total / double(batch.size());
}

TEST(PolicyTrainer, SupervisedStepsLearnTheCompletionAndLeaveTheBaseWeights) {
    auto model = tinyModel();
    const std::vector<std::int32_t> ids = {1, 2, 3, 4, 9, 11, 7, 5};
    const std::vector<float> before = model->logits(ids);
    const torch::Tensor baseQ = model->network().layers[0].projections[0].clone();

    LoraSettings lora;
    lora.rank = 4;
    lora.alpha = 8;
    OptimiserSettings optimiser;
    optimiser.learningRate = 1e-2;
    optimiser.warmupSteps = 3;
    PolicyTrainer trainer(*model, lora, optimiser);
    ASSERT_EQ(trainer.error(), "");
    // Two layers, seven projections, A [4, in] and B [out, 4] each.
    EXPECT_EQ(trainer.trainableParameters(),
              2 * (4 * (32 + 32) + 4 * (32 + 16) * 2 + 4 * (32 + 32) + 4 * (32 + 64) * 2 +
                   4 * (64 + 32)));
    // A fresh adapter leaves the model as it was.
    EXPECT_LT(maxDifference(model->logits(ids), before), 1e-6);

    const std::vector<TrainingSequence> batch = {sequence(ids, 4)};
    const TrainingStep first = trainer.supervisedStep(batch);
    EXPECT_NEAR(first.learningRate, 1e-2 / 3, 1e-9) << "warm-up";
    EXPECT_EQ(first.tokens, 4) << "only the completion is trained";
    EXPECT_GT(first.loss, 2.0) << "near log 16 before learning";
    TrainingStep last = first;
    for (int i = 0; i < 60; ++i)
        last = trainer.supervisedStep(batch);
    EXPECT_EQ(last.step, 61);
    EXPECT_NEAR(last.learningRate, 1e-2, 1e-12);
    EXPECT_LT(last.loss, 0.25 * first.loss) << "from " << first.loss;
    EXPECT_GT(last.gradNorm, 0.0);
    EXPECT_GT(last.tokensPerSecond, 0.0);
    EXPECT_TRUE(torch::equal(model->network().layers[0].projections[0], baseQ))
        << "LoRA trains the adapters only";

    // Merging folds the adapters in: the same logits without them.
    const std::vector<float> adapted = model->logits(ids);
    EXPECT_GT(maxDifference(adapted, before), 0.1);
    model->network().mergeAdapters();
    EXPECT_LT(maxDifference(model->logits(ids), adapted), 1e-4);
    // And greedy decoding now continues the prompt as trained.
    LlamaModel::GenerationOptions greedy;
    greedy.maxTokens = 4;
    EXPECT_EQ(model->generate({1, 2, 3, 4}, greedy).tokens,
              (std::vector<std::int32_t>{9, 11, 7, 5}));
}

TEST(PolicyTrainer, GroupPolicyStepsOnTheModelsOwnSamplesRaiseTheReward) {
    auto model = tinyModel(11);
    LoraSettings lora;
    lora.rank = 4;
    OptimiserSettings optimiser;
    optimiser.learningRate = 2e-2;
    PolicyTrainer trainer(*model, lora, optimiser);
    ASSERT_EQ(trainer.error(), "");
    // The sampler and the trainer agree on what the policy gave each token.
    const auto probe = sampledEpisodes(*model, 0);
    const auto recomputed = trainer.logprobs(probe);
    for (std::size_t i = 4; i < probe[0].tokens.size(); ++i)
        EXPECT_NEAR(recomputed[0][i], probe[0].sampledLogprobs[i], 1e-4);

    const double start = meanRewardOf(sampledEpisodes(*model, 1000));
    PolicyUpdateSettings update;
    update.epochs = 2;
    TrainingStep step;
    for (int round = 1; round <= 12; ++round)
        step = trainer.groupPolicyStep(sampledEpisodes(*model, round), update);
    EXPECT_EQ(step.step, 24);
    EXPECT_GT(step.clipFraction + step.approximateKl + std::abs(step.loss), 0.0);
    const double end = meanRewardOf(sampledEpisodes(*model, 2000));
    EXPECT_GT(end, start + 0.2) << "mean reward from " << start << " to " << end;
    // Generation runs the adapters merged; after 24 steps it still samples the trained policy.
    const auto after = sampledEpisodes(*model, 3000, 4);
    const auto trained = trainer.logprobs(after);
    for (std::size_t e = 0; e < after.size(); ++e)
        for (std::size_t i = 4; i < after[e].tokens.size(); ++i)
            EXPECT_NEAR(trained[e][i], after[e].sampledLogprobs[i], 1e-4);
}

TEST(PolicyTrainer, ValuePretrainingLearnsTheReturnAndLeavesThePolicy) {
    auto model = tinyModel(13);
    PolicyTrainer trainer(*model, LoraSettings{true, 4, 8.0, LoraSettings{}.targets, 1},
                          OptimiserSettings{});
    CriticSettings critic;
    critic.rank = 4;
    critic.learningRate = 1e-2;
    ASSERT_EQ(trainer.enableCritic(critic), "");
    const auto batch = sampledEpisodes(*model, 1);
    const std::vector<float> before = model->logits(batch[0].tokens);
    const TrainingStep first = trainer.valueStep(batch);
    // The head starts at zero: the first loss is half the mean squared return.
    EXPECT_NEAR(first.meanValue, 0.0, 1e-6);
    EXPECT_NEAR(first.valueLoss, 0.5 * first.meanReturn, 1e-5) << "returns are 0 or 1";
    TrainingStep last = first;
    for (int i = 0; i < 80; ++i)
        last = trainer.valueStep(batch);
    // The outcome is not known before the last token is drawn, so no critic reaches zero; the
    // best constant (the mean return p) leaves 0.5 p (1 - p). A critic that reads the tokens
    // drawn so far does better than that.
    const double p = first.meanReturn;
    EXPECT_LT(last.valueLoss, 0.5 * p * (1 - p)) << "from " << first.valueLoss;
    EXPECT_NEAR(last.meanValue, last.meanReturn, 0.05);
    EXPECT_EQ(trainer.steps(), 0) << "no policy step";
    EXPECT_LT(maxDifference(model->logits(batch[0].tokens), before), 1e-6);
}

TEST(PolicyTrainer, PpoStepsWithTheCriticRaiseTheReward) {
    auto model = tinyModel(11);
    LoraSettings lora;
    lora.rank = 4;
    OptimiserSettings optimiser;
    optimiser.learningRate = 2e-2;
    PolicyTrainer trainer(*model, lora, optimiser);
    CriticSettings critic;
    critic.rank = 4;
    critic.learningRate = 1e-2;
    ASSERT_EQ(trainer.enableCritic(critic), "");
    for (int i = 0; i < 5; ++i)
        trainer.valueStep(sampledEpisodes(*model, 100 + i));
    const double start = meanRewardOf(sampledEpisodes(*model, 1000));
    PolicyUpdateSettings update;
    update.epochs = 2;
    TrainingStep step;
    for (int round = 1; round <= 12; ++round)
        step = trainer.ppoStep(sampledEpisodes(*model, round), update);
    ASSERT_EQ(trainer.error(), "");
    EXPECT_EQ(step.step, 24);
    EXPECT_GT(step.valueLoss, 0.0);
    const double end = meanRewardOf(sampledEpisodes(*model, 2000));
    EXPECT_GT(end, start + 0.2) << "mean reward from " << start << " to " << end;
    // Generation runs the adapters merged; after 24 steps it still samples the trained policy.
    const auto after = sampledEpisodes(*model, 3000, 4);
    const auto trained = trainer.logprobs(after);
    for (std::size_t e = 0; e < after.size(); ++e)
        for (std::size_t i = 4; i < after[e].tokens.size(); ++i)
            EXPECT_NEAR(trained[e][i], after[e].sampledLogprobs[i], 1e-4);
}

TEST(PolicyTrainer, BadSettingsAreRefusedWithAReason) {
    auto model = tinyModel();
    LoraSettings lora;
    lora.targets = {"q_proj", "attention"};
    PolicyTrainer unknown(*model, lora, {});
    EXPECT_NE(unknown.error().find("unknown LoRA target attention"), std::string::npos)
        << unknown.error();
    EXPECT_EQ(unknown.supervisedStep({sequence({1, 2, 3}, 1)}).step, 0) << "no step taken";

    auto full = tinyModel();
    LoraSettings none;
    none.enabled = false;
    PolicyTrainer fullTrainer(*full, none, {});
    ASSERT_EQ(fullTrainer.error(), "");
    PolicyUpdateSettings withKl;
    withKl.klCoefficient = 0.1;
    TrainingSequence s = sequence({1, 2, 3}, 1);
    fullTrainer.groupPolicyStep({s, s}, withKl);
    EXPECT_NE(fullTrainer.error().find("KL"), std::string::npos) << fullTrainer.error();

    auto noCritic = tinyModel();
    PolicyTrainer withoutCritic(*noCritic, LoraSettings{}, {});
    EXPECT_EQ(withoutCritic.valueStep({s}).tokens, 0);
    EXPECT_NE(withoutCritic.error().find("need a critic"), std::string::npos)
        << withoutCritic.error();
}

} // namespace
} // namespace kwb::torchnn

namespace kwb::torchnn {
namespace {

// A trainer resumed from a checkpoint continues exactly where the saved one was: the same
// weights, the same optimiser moments (so the same next step), the same step count, the critic
// included; a checkpoint of another shape is refused and changes nothing.
TEST(PolicyTrainer, GradientCheckpointingTakesTheSameSteps) {
    // The same PPO steps with and without recomputing the layers in the backward pass: the
    // same losses, gradient norms and resulting weights (critic included), for LoRA and for
    // full fine-tuning, where the embedding's own gradient must flow too.
    for (const bool full : {false, true}) {
        LoraSettings lora;
        lora.rank = 4;
        lora.enabled = !full;
        OptimiserSettings optimiser;
        optimiser.learningRate = 2e-2;
        CriticSettings critic;
        critic.rank = 4;
        auto plain = tinyModel(13);
        auto checkpointed = tinyModel(13);
        checkpointed->setGradientCheckpointing(true);
        PolicyTrainer a(*plain, lora, optimiser);
        PolicyTrainer b(*checkpointed, lora, optimiser);
        ASSERT_EQ(a.enableCritic(critic), "");
        ASSERT_EQ(b.enableCritic(critic), "");
        for (int round = 1; round <= 3; ++round) {
            const auto batch = sampledEpisodes(*plain, round, 8);
            const TrainingStep x = a.ppoStep(batch, {});
            const TrainingStep y = b.ppoStep(batch, {});
            EXPECT_NEAR(x.loss, y.loss, 1e-6) << "full " << full << ", round " << round;
            EXPECT_NEAR(x.valueLoss, y.valueLoss, 1e-6);
            ASSERT_GT(x.gradNorm, 0.0);
            EXPECT_NEAR(x.gradNorm, y.gradNorm, 1e-5 * x.gradNorm);
            EXPECT_NEAR(a.supervisedStep(batch).gradNorm, b.supervisedStep(batch).gradNorm,
                        1e-5 * x.gradNorm);
        }
        const auto probe = sampledEpisodes(*plain, 9, 1)[0].tokens;
        EXPECT_LT(maxDifference(plain->logits(probe), checkpointed->logits(probe)), 1e-5);
    }
}

TEST(PolicyTrainerCheckpoint, AResumedTrainerTakesTheSameNextStep) {
    const std::string path = ::testing::TempDir() + "/kwb-policy-checkpoint.pt";
    LoraSettings lora;
    lora.rank = 4;
    OptimiserSettings optimiser;
    optimiser.learningRate = 2e-2;
    CriticSettings critic;
    critic.rank = 4;
    auto model = tinyModel(11);
    PolicyTrainer trainer(*model, lora, optimiser);
    ASSERT_EQ(trainer.enableCritic(critic), "");
    for (int round = 1; round <= 3; ++round)
        trainer.ppoStep(sampledEpisodes(*model, round, 8), {});
    ASSERT_EQ(trainer.saveCheckpoint(path), "");

    auto resumedModel = tinyModel(11);
    PolicyTrainer resumed(*resumedModel, lora, optimiser);
    ASSERT_EQ(resumed.enableCritic(critic), "");
    ASSERT_EQ(resumed.loadCheckpoint(path), "");
    EXPECT_EQ(resumed.steps(), trainer.steps());
    const auto next = sampledEpisodes(*model, 4, 8);
    EXPECT_LT(maxDifference(resumedModel->logits(next[0].tokens), model->logits(next[0].tokens)),
              1e-6);
    const TrainingStep original = trainer.ppoStep(next, {});
    const TrainingStep again = resumed.ppoStep(next, {});
    EXPECT_EQ(again.step, original.step);
    EXPECT_NEAR(again.loss, original.loss, 1e-6);
    EXPECT_NEAR(again.valueLoss, original.valueLoss, 1e-6);
    EXPECT_NEAR(again.gradNorm, original.gradNorm, 1e-5);
    EXPECT_LT(maxDifference(resumedModel->logits(next[0].tokens), model->logits(next[0].tokens)),
              1e-5)
        << "the optimiser's moments came back too";

    // Another rank, and a trainer without the critic: refused, nothing changed.
    auto other = tinyModel(11);
    LoraSettings rank8 = lora;
    rank8.rank = 8;
    PolicyTrainer otherRank(*other, rank8, optimiser);
    ASSERT_EQ(otherRank.enableCritic(critic), "");
    const std::vector<float> before = other->logits(next[0].tokens);
    EXPECT_NE(otherRank.loadCheckpoint(path).find("another"), std::string::npos);
    EXPECT_EQ(otherRank.steps(), 0);
    EXPECT_LT(maxDifference(other->logits(next[0].tokens), before), 1e-7);
    auto plain = tinyModel(11);
    PolicyTrainer noCritic(*plain, lora, optimiser);
    EXPECT_NE(noCritic.loadCheckpoint(path).find("critic"), std::string::npos);
    EXPECT_NE(noCritic.loadCheckpoint(path + ".missing").find("cannot resume"), std::string::npos);
    std::remove(path.c_str());
}

} // namespace
} // namespace kwb::torchnn
