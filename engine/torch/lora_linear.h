#pragma once

#include <cstdint>
#include <mutex>
#include <torch/types.h>
#include <vector>

namespace kwb::torchnn {

// A frozen linear weight W [out, in] with a trainable low-rank update (Hu et al. 2021, LoRA):
// y = x W^T + (alpha / rank) * (x A^T) B^T, A [rank, in] drawn as PEFT draws it (uniform within
// 1/sqrt(in)), B [rank -> out] zero, so a fresh adapter leaves the model's outputs unchanged.
// Only A and B take gradients; merging folds the update into W for inference and export.
//
// For generation, forwardMerged runs one matrix product with W + (alpha / rank) B A, formed in
// float32 and kept until A or B change: three kernels instead of seven, which is most of a
// decoding step's launches on a small model. An in-place copy into A or B is seen by its version;
// libtorch's SGD updates without bumping it, so whoever steps an optimiser calls adapterChanged().
// Float32, so that an update far below bfloat16's resolution of W still counts; on a bfloat16
// model that costs a float32 copy of each adapted weight.
class LoraLinear {
public:
    LoraLinear(torch::Tensor weight, int rank, double alpha, std::uint64_t seed);

    // `inputInFloat32`, when given, is x already in float32: projections that read one input
    // (q, k and v; gate and up) share its cast, and with it the copy that the backward pass keeps
    // for A's gradient, instead of keeping one each (about 0.5 GB of a GRPO step's activations
    // for SmolLM2 at 16 x 167 tokens in bfloat16).
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& inputInFloat32 = {}) const;
    // The same maths through the merged float32 weight, in x's type; never builds a graph.
    torch::Tensor forwardMerged(const torch::Tensor& x) const;
    // W + (alpha / rank) * B A, detached: what a merged checkpoint stores.
    torch::Tensor merged() const;
    std::vector<torch::Tensor> parameters() const { return {a_, b_}; }
    // A or B changed in place (an optimiser step): the next forward without a graph merges again.
    void adapterChanged();
    const torch::Tensor& weight() const { return weight_; }
    double scale() const { return scale_; }

private:
    // W + (alpha / rank) * B A in float32, detached.
    torch::Tensor mergedInFloat32() const;
    // mergedInFloat32() for the adapter as it is now, kept between calls.
    torch::Tensor inferenceWeight() const;

    torch::Tensor weight_, a_, b_;
    double scale_;
    // Owned by inferenceWeight(): the merged weight and the versions of A and B it was formed
    // from.
    mutable std::mutex inferenceMutex_;
    mutable torch::Tensor inferenceWeight_;
    mutable std::int64_t inferenceVersionA_ = -1, inferenceVersionB_ = -1;
};

} // namespace kwb::torchnn
