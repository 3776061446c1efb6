#include "agent/tools/tool_arguments.h"

#include <cmath>

using nlohmann::json;

namespace kwb::agent {
namespace {

std::string shortDump(const json& value) {
    std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
    return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

bool hasType(const json& value, const std::string& type) {
    if (type == "string")
        return value.is_string();
    if (type == "integer")
        return value.is_number_integer() ||
               (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>());
    if (type == "number")
        return value.is_number();
    if (type == "boolean")
        return value.is_boolean();
    if (type == "array")
        return value.is_array();
    if (type == "object")
        return value.is_object();
    return true; // a type the checker does not know is not the model's fault
}

std::string checkValue(const json& schema, const json& value, const std::string& where) {
    if (!schema.is_object())
        return {};
    const std::string type = schema.value("type", "");
    if (!type.empty() && !hasType(value, type))
        return where + " must be " +
               (type == "integer" || type == "array" || type == "object" ? "an " : "a ") + type +
               ", got " + shortDump(value);
    if (schema.contains("enum") && schema["enum"].is_array()) {
        bool allowed = false;
        for (const auto& option : schema["enum"])
            allowed |= option == value;
        if (!allowed) {
            std::string options;
            for (const auto& option : schema["enum"])
                options += (options.empty() ? "" : ", ") + shortDump(option);
            return where + " must be one of " + options + ", got " + shortDump(value);
        }
    }
    if (type == "array" && schema.contains("items"))
        for (std::size_t i = 0; i < value.size(); ++i)
            if (auto error =
                    checkValue(schema["items"], value[i], where + "[" + std::to_string(i) + "]");
                !error.empty())
                return error;
    if (type == "object" && schema.contains("properties")) {
        const json& properties = schema["properties"];
        for (const auto& [key, item] : value.items()) {
            const std::string name = where.empty() ? "'" + key + "'" : where + "." + key;
            if (!properties.contains(key)) {
                std::string known;
                for (const auto& [property, unused] : properties.items())
                    known += (known.empty() ? "" : ", ") + property;
                return "unknown parameter " + name + " (expected: " + known + ")";
            }
            if (auto error = checkValue(properties[key], item, name); !error.empty())
                return error;
        }
        for (const auto& required : schema.value("required", json::array()))
            if (required.is_string() && !value.contains(required.get<std::string>()))
                return "missing required parameter " + (where.empty() ? "" : where + ".") + "'" +
                       required.get<std::string>() + "'";
    }
    return {};
}

} // namespace

std::string checkArguments(const json& schema, const json& arguments) {
    if (!arguments.is_object())
        return "the arguments must be a JSON object, got " + shortDump(arguments);
    return checkValue(schema, arguments, "");
}

ToolSchema objectSchema(std::string name, std::string description, json properties,
                        const std::vector<std::string>& required) {
    ToolSchema schema;
    schema.name = std::move(name);
    schema.description = std::move(description);
    schema.parameters = {{"type", "object"}, {"properties", std::move(properties)}};
    if (!required.empty())
        schema.parameters["required"] = required;
    return schema;
}

} // namespace kwb::agent
