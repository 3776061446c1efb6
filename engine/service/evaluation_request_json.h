#pragma once

#include "engine/evaluation/evaluator.h"

#include <nlohmann/json.hpp>
#include <string>

namespace kwb {

// An evaluation request as it crosses a process boundary (`kwb eval` to `kwb serve`). Every
// option travels, so that an evaluation through the daemon follows exactly the rules the command
// line asked for; a value of the wrong type or out of range is an error, not a silent default.
nlohmann::json toJson(const EvaluationTarget& target);
nlohmann::json toJson(const EvaluationOptions& options);
bool targetFromJson(const nlohmann::json& json, EvaluationTarget& target, std::string* error);
bool optionsFromJson(const nlohmann::json& json, EvaluationOptions& options, std::string* error);

} // namespace kwb
