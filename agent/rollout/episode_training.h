#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace kwb::agent {

// `kwb train rft|grpo|value|ppo --config FILE`: CUDA Agent's local recipe on stored episodes.
// RFT fine-tunes the actor on a run's successful episodes (`kwb export rft`); value pretraining
// fits PPO's critic to their rewards; PPO and GRPO update the policy on every scored episode
// (`kwb export verl-sft`), a local model's replies as the ids and log-probabilities it drew.
// The training itself runs in `kwb-model train` (libtorch never shares a process with kwb);
// this is what prepares its data, starts it, follows its steps and records the run.
enum class EpisodeTrainingAlgorithm { Rft, Grpo, Value, Ppo };

std::optional<EpisodeTrainingAlgorithm> parseEpisodeTrainingAlgorithm(const std::string& name);
const char* episodeTrainingAlgorithmName(EpisodeTrainingAlgorithm algorithm);

struct EpisodeTrainingConfig {
    EpisodeTrainingAlgorithm algorithm = EpisodeTrainingAlgorithm::Rft;
    std::string model; // GGUF file or Hugging Face folder
    std::string out;   // the training run's folder: must be new or empty
    // The episodes: a run of the trajectory store (exported here), or rows already exported.
    std::optional<std::int64_t> run;
    std::string store; // empty: the default store
    std::string data;
    double minReward = 1.0; // rft: the episodes kept
    std::string device = "auto";
    // Everything else is passed to `kwb-model train` as its options (steps, batch_size,
    // learning_rate, lora_rank, epochs, clip_low, value_steps, ...): `trainerArguments` lists
    // them; keys neither knows are refused, so a typo does not silently train with a default.
    nlohmann::json trainer = nlohmann::json::object();

    // The settings file's JSON, with the algorithm from the command; nullopt with `error`.
    static std::optional<EpisodeTrainingConfig> fromJson(const nlohmann::json& settings,
                                                         EpisodeTrainingAlgorithm algorithm,
                                                         std::string* error);
    nlohmann::json toJson() const;
};

// kwb-model's train command line for the config, given the data file and the resolved device;
// the trained model goes to out/model (not for value), the state to out/checkpoint.pt, every
// step's line to out/steps.jsonl.
std::vector<std::string> trainerArguments(const EpisodeTrainingConfig& config,
                                          const std::string& executable,
                                          const std::string& dataPath, const std::string& device);

struct EpisodeTrainingOutcome {
    std::string error; // empty when the training finished
    bool stopped = false;
    int rows = 0;                                   // training rows in out/data.jsonl
    int steps = 0;                                  // step lines written
    nlohmann::json last = nlohmann::json::object(); // the last step's figures
};

// Runs it: out/config.json, out/data.jsonl (exported or copied), kwb-model train with its
// output in out/train.log, each step's JSON line handed to `onStep` as it is written (from this
// thread), out/summary.json at the end. A stop ends the trainer; what it wrote stays.
EpisodeTrainingOutcome runEpisodeTraining(const EpisodeTrainingConfig& config,
                                          const std::function<void(const nlohmann::json&)>& onStep,
                                          std::stop_token stop);

} // namespace kwb::agent
