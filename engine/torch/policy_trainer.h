#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kwb::torchnn {

class LlamaModel;

// What trains: LoRA adapters on the named projections of every layer (the default), or every
// weight (small models).
struct LoraSettings {
    bool enabled = true;
    int rank = 16;
    double alpha = 32.0;
    std::vector<std::string> targets = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                        "gate_proj", "up_proj", "down_proj"};
    std::uint64_t seed = 1;
};

// AdamW with a linear warm-up to the learning rate, and the gradient's norm clipped.
struct OptimiserSettings {
    double learningRate = 1e-4;
    double weightDecay = 0.0;
    int warmupSteps = 0;
    double maxGradNorm = 1.0;
};

// The policy update of a GRPO step (CUDA Agent's clip: 0.2 below, 0.28 above).
struct PolicyUpdateSettings {
    double clipLow = 0.2;
    double clipHigh = 0.28;
    double klCoefficient = 0.0; // to the policy as it was when the trainer was made
    double entropyCoefficient = 0.0;
    int epochs = 1; // passes over the batch with the same samples
};

// PPO's critic: a copy of the policy's network (sharing its frozen base weights under LoRA) with
// adapters of its own and a value head on the final hidden state, trained by its own optimiser.
struct CriticSettings {
    int rank = 16;
    double alpha = 32.0;
    double learningRate = 1e-4;
    double valueClip = 0.2; // in PPO steps; 0: off
    double gamma = 1.0;     // CUDA Agent's defaults
    double lambda = 0.95;
    std::uint64_t seed = 2;
};

// One episode as the trainer sees it: every token, which of them the policy wrote (the loss
// applies there; the prompt and tool output are context only), and for RL the log-probability
// each written token had when it was sampled, the episode's reward and its group (the episodes
// of one task, whose rewards GRPO compares).
struct TrainingSequence {
    std::vector<std::int32_t> tokens;
    std::vector<std::uint8_t> trained;
    std::vector<float> sampledLogprobs; // empty: taken from the policy before the update
    double reward = 0.0;
    std::int64_t group = 0;
};

// What every step logs (TrainingStore keeps them; the Training view plots them).
struct TrainingStep {
    int step = 0;
    double loss = 0;
    double learningRate = 0;
    double gradNorm = 0; // before clipping
    double clipFraction = 0;
    double approximateKl = 0;
    double referenceKl = 0;
    double entropy = 0;
    double meanReward = 0;
    double valueLoss = 0;    // the critic's, in value and PPO steps
    double meanValue = 0;    // the critic's estimate over the trained tokens
    double meanReturn = 0;   // its target
    std::int64_t tokens = 0; // trained tokens in the batch
    double seconds = 0;
    double tokensPerSecond = 0; // every token the forward and backward passes processed
    std::int64_t peakMemoryBytes = 0;
};

// Trains a LlamaModel in place: supervised steps (SFT / RFT on successful episodes) and GRPO
// steps, with LoRA or full fine-tuning. One optimiser for the trainer's life; the model's
// generation sees every update at once.
class PolicyTrainer {
public:
    PolicyTrainer(LlamaModel& model, const LoraSettings& lora, const OptimiserSettings& optimiser);
    ~PolicyTrainer();
    PolicyTrainer(const PolicyTrainer&) = delete;
    PolicyTrainer& operator=(const PolicyTrainer&) = delete;

    // Empty when the trainer is ready; otherwise why not (an unknown LoRA target, ...).
    const std::string& error() const;

    // The mean negative log-likelihood of the trained tokens, one optimiser step.
    TrainingStep supervisedStep(const std::vector<TrainingSequence>& batch);
    // Group-relative advantages from the episodes' rewards, the clipped policy loss over the
    // trained tokens, `epochs` optimiser steps.
    TrainingStep groupPolicyStep(const std::vector<TrainingSequence>& batch,
                                 const PolicyUpdateSettings& settings);
    // Gives the trainer a critic (PPO); empty when done, else why not.
    std::string enableCritic(const CriticSettings& settings);
    // Value pretraining: the critic regresses each trained token's return (the episode's reward,
    // discounted by gamma from its last trained token) with the policy untouched.
    TrainingStep valueStep(const std::vector<TrainingSequence>& batch);
    // PPO: the reward on each episode's last trained token, GAE over the trained tokens with the
    // critic's values (whitened advantages), then `epochs` steps of the clipped policy loss and
    // the clipped value loss.
    TrainingStep ppoStep(const std::vector<TrainingSequence>& batch,
                         const PolicyUpdateSettings& settings);
    // Each token's log-probability under the current policy (0 for the first, which nothing
    // predicts), as the sampler would have recorded it at temperature 1.
    std::vector<std::vector<float>> logprobs(const std::vector<TrainingSequence>& batch) const;

    std::int64_t trainableParameters() const;
    int steps() const;

    // A checkpoint a run resumes from: the trained weights (the adapters, or every weight under
    // full fine-tuning), the optimiser's moments and step count, and the critic's when it has
    // one. Written beside `path` and renamed over it, so a crash while writing leaves the last
    // checkpoint whole. Empty when done, else why not.
    std::string saveCheckpoint(const std::string& path) const;
    // Loads one into a trainer made with the same model and settings; a checkpoint of another
    // shape (rank, targets, model, a critic where this trainer has none) is refused with the
    // trainer unchanged.
    std::string loadCheckpoint(const std::string& path);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace kwb::torchnn
