#pragma once
// A small Llama initialised from scratch for libtorch tests: the same code runs SmolLM2, but a
// model of two layers and sixteen tokens trains and samples in milliseconds.
#include "engine/torch/llama_model.h"
#include "engine/torch/llama_network.h"

#include <memory>

namespace kwb::torchnn::tiny {

inline model::LlamaConfig tinyConfig() {
    model::LlamaConfig c;
    c.layers = 2;
    c.heads = 4;
    c.kvHeads = 2;
    c.width = 32;
    c.feedForward = 64;
    c.vocabulary = 16;
    c.context = 64;
    c.headDim = 8;
    c.tiedEmbeddings = true;
    return c;
}

inline std::unique_ptr<LlamaModel> tinyModel(std::uint64_t seed = 5) {
    return LlamaModel::fromNetwork(LlamaNetwork::randomlyInitialised(
        tinyConfig(), seed, torch::Device(torch::kCPU), torch::kFloat32, /*std=*/0.3));
}

} // namespace kwb::torchnn::tiny
