#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kwb {

// Limits on JSON that comes from outside kwb: model servers, stage result files, task and
// episode files, record files. nlohmann's parser itself is iterative, but copying, comparing
// and dumping a value recurse once per nesting level, so a reply nested 100k deep would crash
// the process long after the parse succeeded. Both limits are far above anything legitimate.
struct JsonLimits {
    std::size_t maxBytes = 256u << 20; // a whole file or message
    int maxDepth = 256;                // arrays and objects inside each other
};

// Parses `text`, or returns a discarded value (is_discarded()) with the reason in `error` when
// it is not JSON, too large or nested too deeply. Never throws.
nlohmann::json parseBoundedJson(std::string_view text, const JsonLimits& limits = {},
                                std::string* error = nullptr);
// The same for a whole stream (a file): reads at most maxBytes + 1 bytes.
nlohmann::json parseBoundedJson(std::istream& in, const JsonLimits& limits = {},
                                std::string* error = nullptr);

// An integer from outside JSON, read without exceptions or undefined behaviour: an integer as
// it is, a floating-point number only when it is integral and inside the range (converting
// 4e100 to an integer is undefined behaviour; nlohmann's get<int64_t> does just that);
// anything else is nullopt.
std::optional<std::int64_t> jsonInteger(const nlohmann::json& value);
// object[key] as an integer, or `fallback` when the object, the key or the integer is missing.
std::int64_t integerOr(const nlohmann::json& object, const char* key, std::int64_t fallback);
// The same, clamped to int's range.
int intOr(const nlohmann::json& object, const char* key, int fallback);

// object[key] as a bool or a string, or `fallback` when it is missing or of another type
// (nlohmann's value() throws then).
bool boolOr(const nlohmann::json& object, const char* key, bool fallback);
std::string stringOr(const nlohmann::json& object, const char* key, std::string fallback = {});

// The deepest nesting of arrays and objects in `text` (strings and escapes skipped), stopping
// early once `stopAbove` is exceeded. Linear, no allocation.
int jsonNestingDepth(std::string_view text, int stopAbove);

} // namespace kwb
