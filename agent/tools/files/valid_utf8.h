#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kwb::agent {

// Replaces bytes that are not valid UTF-8 with U+FFFD. Tool output (a binary file, a program's
// raw bytes) goes into JSON requests, and a JSON encoder rejects invalid UTF-8.
std::string toValidUtf8(std::string_view text);

} // namespace kwb::agent
