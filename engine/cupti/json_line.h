#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kwb::cupti {

// Builds one compact JSON object on a single line without allocating per field: the injection
// library formats records on CUPTI's thread, where exceptions and heavy allocators are unwelcome.
class JsonLine {
public:
    explicit JsonLine(std::string_view type);

    JsonLine& field(std::string_view key, std::uint64_t value);
    JsonLine& field(std::string_view key, std::int64_t value);
    JsonLine& field(std::string_view key, std::uint32_t value) {
        return field(key, static_cast<std::uint64_t>(value));
    }
    JsonLine& field(std::string_view key, std::int32_t value) {
        return field(key, static_cast<std::int64_t>(value));
    }
    // A null pointer becomes JSON null, so a record never carries a dangling "(null)".
    JsonLine& field(std::string_view key, const char* text);
    JsonLine& text(std::string_view key, std::string_view text);
    JsonLine& triple(std::string_view key, std::int64_t x, std::int64_t y, std::int64_t z);

    // The finished line, with its trailing newline.
    const std::string& finish();

private:
    void key(std::string_view name);
    std::string line_;
    bool finished_ = false;
};

// Appends `text` to `out` as a JSON string literal (quotes included). Bytes that are not valid
// UTF-8 become U+FFFD so a reader never rejects the line for them.
void appendJsonString(std::string& out, std::string_view text);

} // namespace kwb::cupti
