#include "engine/system/bounded_json.h"

#include <iterator>

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
    nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded())
        return fail("not valid JSON");
    if (error)
        error->clear();
    return value;
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
