#pragma once

#include "engine/evaluation/evaluator.h"

#include <iostream>
#include <optional>
#include <string>

namespace kwb::cli {

// How `kwb eval`, `kwb baseline` and `kwb timeline` use `kwb serve`:
//   auto: through the daemon for this configuration, started if none runs; in this process when
//         it cannot be reached or started (a note on stderr says why);
//   on:   through the daemon or not at all;
//   off:  in this process, as before the daemon existed.
// The --serve option wins over KWB_SERVE; the default is auto.
enum class ServeMode { Auto, On, Off };
std::optional<ServeMode> serveModeFrom(const std::string& text);
ServeMode serveModeFor(const std::string& option);

// The --serve option's help, the same for every command that evaluates.
inline constexpr const char* kServeOptionHelp =
    "auto: through `kwb serve` (started when none runs; warm workers and baselines stay between "
    "calls), falling back to this process; on: through it or fail; off: in this process. "
    "Default: $KWB_SERVE, else auto";

// Through the daemon when the mode allows it (`remote(&error)`), else in this process
// (`local()`). Nullopt, after a message on stderr, when --serve on could not reach one; under
// auto a note says why the evaluation runs here.
template <typename Local, typename Remote>
std::optional<EvaluationResult> evaluateWhereServed(const std::string& serveOption, Local local,
                                                    Remote remote) {
    const ServeMode mode = serveModeFor(serveOption);
    if (mode != ServeMode::Off) {
        std::string error;
        if (std::optional<EvaluationResult> result = remote(&error))
            return result;
        if (mode == ServeMode::On) {
            std::cerr << "kwb: no evaluation service: " << error << "\n";
            return std::nullopt;
        }
        std::cerr << "kwb: evaluating in this process (no evaluation service: " << error << ")\n";
    }
    return local();
}

// A workspace or a file pair evaluated where --serve says (evaluateWhereServed): through this
// configuration's daemon, or by an Evaluator of this process.
std::optional<EvaluationResult> evaluateTargetWhereServed(const std::string& serveOption,
                                                          const EvaluationTarget& target,
                                                          const EvaluationOptions& options,
                                                          const std::string& python,
                                                          const Evaluator::Progress& progress);

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
