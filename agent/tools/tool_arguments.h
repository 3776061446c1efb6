#pragma once

#include "agent/llm/tool_schema.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kwb::agent {

// Checks a model's arguments against the part of JSON Schema the tools use: an object with typed
// properties (string, integer, number, boolean, array, object), required keys, enums and array
// items. Models misname and mistype parameters often; a precise message ("'limit' must be an
// integer, got "ten"") lets them fix the call. Returns an empty string when the arguments fit.
std::string checkArguments(const nlohmann::json& schema, const nlohmann::json& arguments);

// The schema of a tool whose arguments are one object with these properties.
ToolSchema objectSchema(std::string name, std::string description, nlohmann::json properties,
                        const std::vector<std::string>& required);

} // namespace kwb::agent
