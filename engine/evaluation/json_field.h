#pragma once

#include <nlohmann/json.hpp>

namespace kwb {

// Reads `key` from an object, or `fallback` when it is missing or has another type. Harness
// results and stored records are outside input: json::value would throw on a mistyped field,
// and one bad field must not cost the whole record.
template <typename T>
T jsonField(const nlohmann::json& j, const char* key, T fallback) {
    if (!j.is_object() || !j.contains(key))
        return fallback;
    try {
        return j.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
        return fallback;
    }
}

} // namespace kwb
