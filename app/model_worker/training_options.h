#pragma once

#include "engine/torch/policy_trainer.h"

#include <CLI/CLI.hpp>

namespace kwb::modelworker {

// The options every training command of kwb-model takes: the optimiser's (learning rate,
// warm-up, weight decay, gradient clip), LoRA's (rank, alpha, target projections), --full and
// --gradient-checkpointing.
void addTrainingOptions(CLI::App* command, torchnn::OptimiserSettings& optimiser,
                        torchnn::LoraSettings& lora, bool& full, bool& gradientCheckpointing);

} // namespace kwb::modelworker
