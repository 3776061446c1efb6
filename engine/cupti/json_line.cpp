#include "engine/cupti/json_line.h"

#include <charconv>

namespace kwb::cupti {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is invalid.
std::size_t utf8SequenceLength(std::string_view text, std::size_t i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    if (byte >= 0xC2 && byte <= 0xDF)
        length = 2;
    else if (byte >= 0xE0 && byte <= 0xEF)
        length = 3;
    else if (byte >= 0xF0 && byte <= 0xF4)
        length = 4;
    else
        return 0;
    if (i + length > text.size())
        return 0;
    for (std::size_t k = 1; k < length; ++k)
        if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80)
            return 0;
    return length;
}

template <typename T>
void appendNumber(std::string& out, T value) {
    char digits[24];
    const auto result = std::to_chars(digits, digits + sizeof digits, value);
    out.append(digits, result.ptr);
}

} // namespace

void appendJsonString(std::string& out, std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out.push_back('"');
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if (c == '\n') {
            out.append("\\n");
        } else if (c == '\t') {
            out.append("\\t");
        } else if (c < 0x20 || c == 0x7F) {
            out.append("\\u00");
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xF]);
        } else if (c < 0x80) {
            out.push_back(static_cast<char>(c));
        } else if (std::size_t length = utf8SequenceLength(text, i); length > 0) {
            out.append(text.substr(i, length));
            i += length - 1;
        } else {
            out.append("\\ufffd");
        }
    }
    out.push_back('"');
}

JsonLine::JsonLine(std::string_view type) {
    line_.reserve(256);
    line_.append("{\"t\":");
    appendJsonString(line_, type);
}

void JsonLine::key(std::string_view name) {
    line_.push_back(',');
    appendJsonString(line_, name);
    line_.push_back(':');
}

JsonLine& JsonLine::field(std::string_view name, std::uint64_t value) {
    key(name);
    appendNumber(line_, value);
    return *this;
}

JsonLine& JsonLine::field(std::string_view name, std::int64_t value) {
    key(name);
    appendNumber(line_, value);
    return *this;
}

JsonLine& JsonLine::field(std::string_view name, const char* value) {
    key(name);
    if (value)
        appendJsonString(line_, value);
    else
        line_.append("null");
    return *this;
}

JsonLine& JsonLine::text(std::string_view name, std::string_view value) {
    key(name);
    appendJsonString(line_, value);
    return *this;
}

JsonLine& JsonLine::triple(std::string_view name, std::int64_t x, std::int64_t y, std::int64_t z) {
    key(name);
    line_.push_back('[');
    appendNumber(line_, x);
    line_.push_back(',');
    appendNumber(line_, y);
    line_.push_back(',');
    appendNumber(line_, z);
    line_.push_back(']');
    return *this;
}

const std::string& JsonLine::finish() {
    if (!finished_) {
        line_.append("}\n");
        finished_ = true;
    }
    return line_;
}

} // namespace kwb::cupti
