#include "engine/torch/lora_linear.h"

#include <ATen/CPUGeneratorImpl.h>
#include <cmath>
#include <torch/torch.h>

namespace kwb::torchnn {

LoraLinear::LoraLinear(torch::Tensor weight, int rank, double alpha, std::uint64_t seed)
    : weight_(weight.detach()), scale_(alpha / std::max(1, rank)) {
    TORCH_CHECK(weight_.dim() == 2 && rank > 0, "LoRA needs a [out, in] weight and a rank > 0");
    const std::int64_t out = weight_.size(0), in = weight_.size(1);
    // The adapter trains in float32 whatever the frozen weight's type (bf16 on a GPU).
    const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(weight_.device());
    torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    a_ = torch::empty({rank, in}, torch::kFloat32)
             .uniform_(-bound, bound, generator)
             .to(options.device())
             .set_requires_grad(true);
    b_ = torch::zeros({out, rank}, options).set_requires_grad(true);
}

torch::Tensor LoraLinear::forward(const torch::Tensor& x,
                                  const torch::Tensor& inputInFloat32) const {
    const torch::Tensor base = torch::linear(x, weight_);
    const torch::Tensor x32 = inputInFloat32.defined() ? inputInFloat32 : x.to(torch::kFloat32);
    const torch::Tensor update = torch::linear(torch::linear(x32, a_), b_);
    return base + (scale_ * update).to(base.scalar_type());
}

void LoraLinear::adapterChanged() {
    const std::lock_guard lock(inferenceMutex_);
    inferenceWeight_ = torch::Tensor();
}

torch::Tensor LoraLinear::inferenceWeight() const {
    const std::lock_guard lock(inferenceMutex_);
    if (!inferenceWeight_.defined() || inferenceVersionA_ != a_._version() ||
        inferenceVersionB_ != b_._version()) {
        inferenceWeight_ = mergedInFloat32();
        inferenceVersionA_ = a_._version();
        inferenceVersionB_ = b_._version();
    }
    return inferenceWeight_;
}

torch::Tensor LoraLinear::forwardMerged(const torch::Tensor& x) const {
    torch::NoGradGuard noGrad;
    return torch::linear(x.to(torch::kFloat32), inferenceWeight()).to(x.scalar_type());
}

torch::Tensor LoraLinear::mergedInFloat32() const {
    torch::NoGradGuard noGrad;
    return weight_.to(torch::kFloat32) + scale_ * torch::matmul(b_, a_);
}

torch::Tensor LoraLinear::merged() const {
    return mergedInFloat32().to(weight_.scalar_type());
}

} // namespace kwb::torchnn
