#include "training_options.h"

namespace kwb::modelworker {

void addTrainingOptions(CLI::App* command, torchnn::OptimiserSettings& optimiser,
                        torchnn::LoraSettings& lora, bool& full, bool& gradientCheckpointing) {
    command->add_option("--learning-rate", optimiser.learningRate, "AdamW's (1e-4)")
        ->check(CLI::PositiveNumber);
    command->add_option("--warmup", optimiser.warmupSteps, "Linear warm-up steps (0)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--weight-decay", optimiser.weightDecay, "AdamW's (0)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--max-grad-norm", optimiser.maxGradNorm, "Clip (1.0; 0: off)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--lora-rank", lora.rank, "LoRA rank (16)")->check(CLI::PositiveNumber);
    command->add_option("--lora-alpha", lora.alpha, "LoRA alpha (32)")->check(CLI::PositiveNumber);
    command->add_option("--lora-targets", lora.targets, "Projections to adapt (default: all seven)")
        ->delimiter(',');
    command->add_flag("--full", full, "Train every weight instead of LoRA adapters");
    command->add_flag("--gradient-checkpointing", gradientCheckpointing,
                      "Keep one layer's activations and compute each layer again in the backward "
                      "pass: long episodes in far less memory, about a third more time");
}

} // namespace kwb::modelworker
