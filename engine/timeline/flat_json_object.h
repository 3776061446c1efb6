#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::timeline {

// One value of a flat JSON object: the shapes a record line's fields take. Anything else (a
// float, a nested object, an array that is not all integers) is Other, which no field accepts.
struct FlatJsonValue {
    enum class Kind : std::uint8_t { Integer, String, Null, Bool, IntegerArray, Other };
    Kind kind = Kind::Other;
    std::int64_t integer = 0;           // Integer (fits int64; larger numbers are Other)
    std::string text;                   // String, unescaped
    std::vector<std::int64_t> integers; // IntegerArray
};

// Which JSON parser reads record lines. simdjson where the build found it (Debian's
// libsimdjson-dev): it reads a 1M-record file about ten times faster than nlohmann-json, whose
// DOM (a map and a string per field) cost ~10 s there. nlohmann-json otherwise (GPU hosts
// without the package), and in tests that check both agree.
enum class FlatJsonParser { Fastest, Nlohmann };
bool simdjsonAvailable();

// A JSON object of scalars and integer arrays, parsed from one line. Reusable: parse() keeps the
// field storage of the previous line, so reading a file allocates almost nothing per line.
class FlatJsonObject {
public:
    // False (and no fields) when the text is not exactly one JSON object; a later duplicate key
    // replaces an earlier one, as nlohmann-json's DOM does.
    bool parse(std::string_view text, FlatJsonParser parser = FlatJsonParser::Fastest);

    // The field, or null when it is absent.
    const FlatJsonValue* find(std::string_view key) const;
    std::size_t size() const { return used_; }

private:
    FlatJsonValue& add(std::string_view key);
    bool parseWithNlohmann(std::string_view text);
    bool parseWithSimdjson(std::string_view text);

    std::vector<std::string> keys_;
    std::vector<FlatJsonValue> values_;
    std::size_t used_ = 0;
    std::string padded_; // simdjson reads up to 64 bytes past the end of its input
};

} // namespace kwb::timeline
