#pragma once
// Training batches for libtorch tests on the tiny Llama (tiny_llama.h): a sequence with its
// trained tokens, and episodes the model samples itself with a reward GRPO and PPO can learn.
#include "engine/torch/llama_model.h"
#include "engine/torch/policy_trainer.h"

#include <cstdint>
#include <vector>

namespace kwb::torchnn::tiny {

// `tokens`, trained from `promptLength` on.
inline TrainingSequence sequence(std::vector<std::int32_t> tokens, std::size_t promptLength) {
    TrainingSequence s;
    s.trained.assign(tokens.size(), 0);
    for (std::size_t i = promptLength; i < tokens.size(); ++i)
        s.trained[i] = 1;
    s.tokens = std::move(tokens);
    return s;
}

// Episodes of the prompt with sampled two-token completions (seeds round * 1000 + i), rewarded
// when both tokens are from the lower half of the vocabulary (what GRPO and PPO are asked to
// learn), with the log-probabilities they were sampled with.
inline std::vector<TrainingSequence> sampledEpisodes(LlamaModel& model, int round, int count = 32) {
    const std::vector<std::int32_t> prompt = {3, 1, 4, 1};
    std::vector<TrainingSequence> batch;
    LlamaModel::GenerationOptions sampling;
    sampling.maxTokens = 2;
    sampling.temperature = 1.0;
    for (int i = 0; i < count; ++i) {
        sampling.seed = std::uint64_t(round) * 1000 + std::uint64_t(i);
        const auto g = model.generate(prompt, sampling);
        std::vector<std::int32_t> tokens = prompt;
        tokens.insert(tokens.end(), g.tokens.begin(), g.tokens.end());
        TrainingSequence s = sequence(tokens, prompt.size());
        s.sampledLogprobs.assign(prompt.size(), 0.0F);
        s.sampledLogprobs.insert(s.sampledLogprobs.end(), g.logprobs.begin(), g.logprobs.end());
        s.reward = g.tokens.size() == 2 && g.tokens[0] < 8 && g.tokens[1] < 8 ? 1.0 : 0.0;
        batch.push_back(std::move(s));
    }
    return batch;
}

} // namespace kwb::torchnn::tiny
