#pragma once

#include <CLI/CLI.hpp>

namespace kwb::modelworker {

// `kwb-model train sft`: supervised fine-tuning (RFT when the data are a run's successful
// episodes, `kwb export rft`) of a local model on exported conversations.
void addTrainCommand(CLI::App& app);

} // namespace kwb::modelworker
