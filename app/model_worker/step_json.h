#pragma once

#include "engine/torch/policy_trainer.h"

#include <nlohmann/json.hpp>

namespace kwb::modelworker {

// A training step's figures as `kwb-model train` prints them and `kwb-model serve` replies.
nlohmann::json stepJson(const torchnn::TrainingStep& step);

} // namespace kwb::modelworker
