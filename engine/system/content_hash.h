#pragma once

#include <string>

namespace kwb {

// Lower-case hex SHA-256 of bytes, or of a file's contents (empty string when unreadable).
std::string sha256Hex(const std::string& bytes);
std::string sha256OfFile(const std::string& path);

} // namespace kwb
