#pragma once

#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <vector>

namespace kwb::torchnn {

// The optimiser's per-step work on every trained tensor at once (torch's multi-tensor `_foreach`
// kernels), where libtorch's C++ `clip_grad_norm_` and `AdamW::step` loop over the tensors: a
// LoRA run on every projection of a 30-layer model trains 420 small tensors, and the loops
// launch about ten kernels for each, some 5,000 launches per step that the GPU waits on. PyTorch's
// Python optimisers take the same multi-tensor path by default. The maths and the optimiser's
// state (so its checkpoints) are libtorch's own.

// Scales the gradients so that their joint 2-norm is at most `maxNorm`; returns the norm before
// scaling (torch::nn::utils::clip_grad_norm_'s result and maths).
double clipGradientNorm(const std::vector<torch::Tensor>& parameters, double maxNorm);

// One AdamW step over every parameter with a gradient, with its group's learning rate, betas,
// epsilon and weight decay, in `optimiser`'s own state (torch::optim::AdamW::step's maths);
// AMSGrad groups take libtorch's own step.
void adamwStep(torch::optim::AdamW& optimiser);

} // namespace kwb::torchnn
