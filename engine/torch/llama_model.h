#pragma once

#include "engine/model/llama_weights.h"
#include "engine/model/token_constraint.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kwb::torchnn {

struct LlamaNetwork;

// A Llama-family decoder in libtorch (RMSNorm, rotary positions as Hugging Face applies them,
// SwiGLU, grouped-query attention, tied or untied embeddings), built from
// model::readLlamaWeights: a GGUF file or a Hugging Face folder. This header names no torch
// type, so the worker's command-line code compiles without torch's headers.
class LlamaModel {
public:
    struct Loaded;
    // device: "cpu" or "cuda"; float32 on the CPU, bfloat16 on a GPU unless `float32` is set.
    static Loaded load(const std::string& path, const std::string& device, bool float32 = false);
    // Around a network built otherwise (initialised from scratch, or being trained).
    static std::unique_ptr<LlamaModel> fromNetwork(std::unique_ptr<LlamaNetwork> network);
    ~LlamaModel();

    // The tensors and the forward pass, for training (PolicyTrainer) and export.
    LlamaNetwork& network();
    const LlamaNetwork& network() const;
    // Training computes each layer again in its backward pass instead of keeping its activations
    // (LlamaNetwork::gradientCheckpointing); set before a trainer copies the network.
    void setGradientCheckpointing(bool enabled);

    // Logits of every position of one sequence: positions x vocabulary floats, row-major.
    std::vector<float> logits(const std::vector<std::int32_t>& ids) const;

    struct GenerationOptions {
        int maxTokens = 64;
        double temperature = 0.0; // 0: greedy
        double topP = 1.0;
        int topK = 0; // 0: no limit
        std::vector<std::int32_t> stopIds;
        std::uint64_t seed = 0;
    };
    struct Generation {
        std::vector<std::int32_t> tokens; // the new tokens, a stop token included
        // Each token's log-probability under the distribution it was drawn from (the logits
        // divided by the temperature; plain log-softmax when greedy), as PPO needs them.
        std::vector<float> logprobs;
        std::string stopReason; // "stop_token", "max_tokens" or "context"
        double prefillSeconds = 0;
        double decodeSeconds = 0;
        // How the steps ran: "cuda graphs (N captured)", "eager", or "eager (why graphs were
        // not used)" (DecodeGraphs).
        std::string decoding;
    };
    // Continues `prompt` one token at a time with a key/value cache allocated once for the
    // prompt and every token asked for (each step attends to the cache, not the whole sequence).
    Generation generate(const std::vector<std::int32_t>& prompt,
                        const GenerationOptions& options) const;
    // `count` continuations of one prompt decoded side by side as one batch (a group of GRPO
    // samples): the prompt's keys and values are computed once per row, then every step runs
    // one forward pass for all rows. Row r draws its tokens under `constraints[r]` when given
    // (constrained decoding: other ids are masked out before the draw); its log-probabilities
    // stay those of the unconstrained distribution, which is what the trainer recomputes. A row
    // that has stopped feeds its last token again until all have, and those steps are dropped.
    std::vector<Generation>
    generateGroup(const std::vector<std::int32_t>& prompt, int count,
                  const GenerationOptions& options,
                  const std::vector<model::TokenConstraint*>& constraints = {}) const;
    int vocabulary() const;
    // Every weight under Hugging Face's names, adapters merged in, as float32 host copies: what
    // a trained model's folder stores.
    std::vector<std::pair<std::string, model::FloatTensor>> exportWeights() const;
    const model::LlamaConfig& config() const;
    std::string describe() const; // "30 layers, 9 heads (3 key/value), width 576, cpu float32"

private:
    LlamaModel();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

struct LlamaModel::Loaded {
    std::unique_ptr<LlamaModel> model;
    std::string error;
    explicit operator bool() const { return model != nullptr; }
};

} // namespace kwb::torchnn
