#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kwb::agent {

// A tool the model may call. Both APIs take the parameters as a JSON schema object.
struct ToolSchema {
    std::string name;
    std::string description;
    nlohmann::json parameters = {{"type", "object"}, {"properties", nlohmann::json::object()}};
};

} // namespace kwb::agent
