#pragma once

#include <CLI/CLI.hpp>

namespace kwb::modelworker {

// `kwb-model serve MODEL`: the policy of a training run as a long-lived process. kwb (which never
// loads libtorch) sends one JSON request per line and reads one reply per line: sample a group of
// continuations of a chat (optionally under a choice grammar), take a GRPO step on scored
// samples, save the model. The lines travel on descriptor 3 (a socket LineProcess hands over)
// when it is open, else on standard input and output.
void addServeCommand(CLI::App& app);

} // namespace kwb::modelworker
