#pragma once

#include "engine/torch/llama_network.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <torch/types.h>

namespace kwb::torchnn {

// The decoding steps of one generation on a CUDA device, each a replay of a CUDA graph.
//
// A step of a small model is hundreds of small kernels (SmolLM2-135M: about 55 per layer, 30
// layers); launched one by one from the host, the step takes as long as the launches do, whatever
// the batch (33 tokens/s at batch 1 on an H200, bench/results/2026-12-04-h200-model-throughput-*).
// A graph launches them all at once. It is captured from LlamaNetwork::decodeStep, whose shapes
// and addresses are fixed; the token ids and the position are copied into its static inputs
// before each replay. Attention reads a window of the cache, the next power of two at or above
// the position (at least kSmallestWindow, at most the cache's capacity), so a short reply does
// not read a long context's empty slots; one graph per window, captured when first needed.
//
// Graphs live as long as this object, one generation: the merged adapter weights they read are
// fixed while it runs (a training step between two generations merges new ones). Where a capture
// fails, the step runs eagerly from then on and why is kept (fallbackReason).
class DecodeGraphs {
public:
    static constexpr std::int64_t kSmallestWindow = 256;

    // `cache` holds the prompt's positions for `batch` rows and outlives this object.
    DecodeGraphs(const LlamaNetwork& network, LlamaNetwork::KvCache& cache, std::int64_t batch);
    ~DecodeGraphs();
    DecodeGraphs(const DecodeGraphs&) = delete;
    DecodeGraphs& operator=(const DecodeGraphs&) = delete;

    // Whether graphs are wanted for `network`: a CUDA device, and KWB_CUDA_GRAPHS is not "off".
    static bool wanted(const LlamaNetwork& network);

    // Logits [batch, vocabulary] (float32, on the device) for `ids` ([batch] int64 on the host)
    // at the cache's next position; the cache's length grows by one. The tensor is valid until
    // the next step.
    torch::Tensor step(const torch::Tensor& ids);

    int graphsCaptured() const { return int(graphs_.size()); }
    const std::string& fallbackReason() const { return fallbackReason_; }

private:
    struct Captured;
    std::int64_t windowFor(std::int64_t position) const;
    Captured* capture(std::int64_t window);

    const LlamaNetwork& network_;
    LlamaNetwork::KvCache& cache_;
    torch::Tensor ids_, position_; // the graphs' static inputs
    std::map<std::int64_t, std::unique_ptr<Captured>> graphs_;
    std::string fallbackReason_;
};

} // namespace kwb::torchnn
