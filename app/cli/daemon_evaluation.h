#pragma once

#include "engine/evaluation/evaluator.h"

#include <optional>
#include <string>

namespace kwb::cli {

// How `kwb eval` and `kwb baseline` use `kwb serve`:
//   auto: through the daemon for this configuration, started if none runs; in this process when
//         it cannot be reached or started (a note on stderr says why);
//   on:   through the daemon or not at all;
//   off:  in this process, as before the daemon existed.
// The --serve option wins over KWB_SERVE; the default is auto.
enum class ServeMode { Auto, On, Off };
std::optional<ServeMode> serveModeFrom(const std::string& text);
ServeMode serveModeFor(const std::string& option);

// The result of evaluating through the daemon, or nullopt (with `error`) when no daemon could be
// used. The record gains a "service" stage first: the connection, the daemon's start when this
// call started it, and the request and result on the socket, so that the stages still add up to
// the command's wall time.
std::optional<EvaluationResult> evaluateThroughDaemon(const EvaluationTarget& target,
                                                      const EvaluationOptions& options,
                                                      const std::string& python,
                                                      const Evaluator::Progress& progress,
                                                      std::string* error);
std::optional<EvaluationResult> baselineThroughDaemon(const std::string& taskPath,
                                                      const EvaluationOptions& options,
                                                      const std::string& python,
                                                      std::string* error);

// The serve arguments a client starts the daemon with.
inline constexpr int kDefaultIdleExitSeconds = 900;

} // namespace kwb::cli
