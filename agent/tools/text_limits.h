#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kwb::agent {

// Replaces bytes that are not valid UTF-8 with U+FFFD. Tool output (a binary file, a program's
// raw bytes) goes into JSON requests, and a JSON encoder rejects invalid UTF-8.
std::string toValidUtf8(std::string_view text);

struct LimitedText {
    std::string text;
    bool truncated = false;
    std::size_t omittedBytes = 0;
};

// Keeps at most `limit` bytes: the head and the tail (where errors and summaries usually are),
// cut at character boundaries, with a note in the middle saying how much was left out.
LimitedText limitText(std::string_view text, std::size_t limit);

} // namespace kwb::agent
