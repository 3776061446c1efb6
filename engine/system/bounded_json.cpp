#include "engine/system/bounded_json.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace kwb {

int jsonNestingDepth(std::string_view text, int stopAbove) {
    int depth = 0;
    int deepest = 0;
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i; // the escaped character, whatever it is
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest) {
                deepest = depth;
                if (deepest > stopAbove)
                    return deepest;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

nlohmann::json parseBoundedJson(std::string_view text, const JsonLimits& limits,
                                std::string* error) {
    auto fail = [&](std::string why) {
        if (error)
            *error = std::move(why);
        return nlohmann::json(nlohmann::json::value_t::discarded);
    };
    if (text.size() > limits.maxBytes)
        return fail("JSON larger than " + std::to_string(limits.maxBytes) + " bytes");
    if (jsonNestingDepth(text, limits.maxDepth) > limits.maxDepth)
        return fail("JSON nested deeper than " + std::to_string(limits.maxDepth) + " levels");
    // Exceptions on, caught here, so that the reason and the place reach the user: the
    // exception-free parse only says "discarded", and the parser throws more than parse_error
    // (a number too large for a double is out_of_range).
    nlohmann::json value;
    try {
        value = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& parseError) {
        return fail("not valid JSON (syntax error at byte " + std::to_string(parseError.byte) +
                    ")");
    } catch (const nlohmann::json::exception&) {
        return fail("not valid JSON (a number out of range)");
    }
    if (error)
        error->clear();
    return value;
}

std::optional<std::int64_t> jsonInteger(const nlohmann::json& value) {
    if (value.is_number_unsigned()) {
        const auto u = value.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return std::nullopt;
        return static_cast<std::int64_t>(u);
    }
    if (value.is_number_integer())
        return value.get<std::int64_t>();
    if (value.is_number_float()) {
        const double d = value.get<double>();
        // 2^63 is exactly representable; every double below it converts without overflow.
        if (std::isfinite(d) && d == std::trunc(d) && d >= -9223372036854775808.0 &&
            d < 9223372036854775808.0)
            return static_cast<std::int64_t>(d);
    }
    return std::nullopt;
}

std::int64_t integerOr(const nlohmann::json& object, const char* key, std::int64_t fallback) {
    if (!object.is_object())
        return fallback;
    const auto it = object.find(key);
    if (it == object.end())
        return fallback;
    return jsonInteger(*it).value_or(fallback);
}

int intOr(const nlohmann::json& object, const char* key, int fallback) {
    const std::int64_t value = integerOr(object, key, fallback);
    return static_cast<int>(std::clamp<std::int64_t>(value, std::numeric_limits<int>::min(),
                                                     std::numeric_limits<int>::max()));
}

bool boolOr(const nlohmann::json& object, const char* key, bool fallback) {
    if (!object.is_object())
        return fallback;
    const auto it = object.find(key);
    return it != object.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::string stringOr(const nlohmann::json& object, const char* key, std::string fallback) {
    if (!object.is_object())
        return fallback;
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::move(fallback);
}

nlohmann::json parseBoundedJson(std::istream& in, const JsonLimits& limits, std::string* error) {
    std::string text;
    char buffer[65536];
    while (in && text.size() <= limits.maxBytes) {
        in.read(buffer, sizeof buffer);
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
    }
    return parseBoundedJson(text, limits, error);
}

} // namespace kwb
