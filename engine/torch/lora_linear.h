#pragma once

#include <cstdint>
#include <torch/types.h>
#include <vector>

namespace kwb::torchnn {

// A frozen linear weight W [out, in] with a trainable low-rank update (Hu et al. 2021, LoRA):
// y = x W^T + (alpha / rank) * (x A^T) B^T, A [rank, in] drawn as PEFT draws it (uniform within
// 1/sqrt(in)), B [rank -> out] zero, so a fresh adapter leaves the model's outputs unchanged.
// Only A and B take gradients; merging folds the update into W for inference and export.
class LoraLinear {
public:
    LoraLinear(torch::Tensor weight, int rank, double alpha, std::uint64_t seed);

    torch::Tensor forward(const torch::Tensor& x) const;
    // W + (alpha / rank) * B A, detached: what a merged checkpoint stores.
    torch::Tensor merged() const;
    std::vector<torch::Tensor> parameters() const { return {a_, b_}; }
    const torch::Tensor& weight() const { return weight_; }
    double scale() const { return scale_; }

private:
    torch::Tensor weight_, a_, b_;
    double scale_;
};

} // namespace kwb::torchnn
