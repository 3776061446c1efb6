#include "engine/torch/multi_tensor_step.h"

#include <cmath>
#include <map>
#include <torch/torch.h>

namespace kwb::torchnn {

double clipGradientNorm(const std::vector<torch::Tensor>& parameters, double maxNorm) {
    std::vector<torch::Tensor> grads;
    for (const auto& parameter : parameters)
        if (parameter.grad().defined())
            grads.push_back(parameter.grad());
    if (grads.empty())
        return 0.0;
    torch::NoGradGuard noGrad;
    const torch::Tensor total = torch::stack(at::_foreach_norm(grads, 2)).norm(2);
    // On the device until the end: no wait for the norm before the gradients are scaled.
    at::_foreach_mul_(grads, (maxNorm / (total + 1e-6)).clamp_max(1.0));
    return total.item<double>();
}

void adamwStep(torch::optim::AdamW& optimiser) {
    for (auto& group : optimiser.param_groups())
        if (static_cast<const torch::optim::AdamWOptions&>(group.options()).amsgrad()) {
            optimiser.step();
            return;
        }
    torch::NoGradGuard noGrad;
    for (auto& group : optimiser.param_groups()) {
        const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
        const double lr = options.lr();
        const double beta1 = std::get<0>(options.betas());
        const double beta2 = std::get<1>(options.betas());
        // Tensors whose step counts agree are stepped together (their bias corrections match).
        struct Batch {
            std::vector<torch::Tensor> params, grads, averages, squares;
            std::vector<torch::optim::AdamWParamState*> states;
        };
        std::map<std::int64_t, Batch> batches;
        for (auto& parameter : group.params()) {
            if (!parameter.grad().defined())
                continue;
            auto& slot = optimiser.state()[parameter.unsafeGetTensorImpl()];
            if (!slot) {
                auto fresh = std::make_unique<torch::optim::AdamWParamState>();
                fresh->step(0);
                fresh->exp_avg(torch::zeros_like(parameter, torch::MemoryFormat::Preserve));
                fresh->exp_avg_sq(torch::zeros_like(parameter, torch::MemoryFormat::Preserve));
                slot = std::move(fresh);
            }
            auto& state = static_cast<torch::optim::AdamWParamState&>(*slot);
            Batch& batch = batches[state.step() + 1];
            batch.params.push_back(parameter);
            batch.grads.push_back(parameter.grad());
            batch.averages.push_back(state.exp_avg());
            batch.squares.push_back(state.exp_avg_sq());
            batch.states.push_back(&state);
        }
        for (auto& [step, batch] : batches) {
            for (auto* state : batch.states)
                state->step(step);
            if (options.weight_decay() != 0)
                at::_foreach_mul_(batch.params, 1 - lr * options.weight_decay());
            const double correction1 = 1 - std::pow(beta1, double(step));
            const double correction2 = 1 - std::pow(beta2, double(step));
            at::_foreach_mul_(batch.averages, beta1);
            at::_foreach_add_(batch.averages, batch.grads, 1 - beta1);
            at::_foreach_mul_(batch.squares, beta2);
            at::_foreach_addcmul_(batch.squares, batch.grads, batch.grads, 1 - beta2);
            std::vector<torch::Tensor> denominators = at::_foreach_sqrt(batch.squares);
            at::_foreach_div_(denominators, std::sqrt(correction2));
            at::_foreach_add_(denominators, options.eps());
            at::_foreach_addcdiv_(batch.params, batch.averages, denominators, -lr / correction1);
        }
    }
}

} // namespace kwb::torchnn
