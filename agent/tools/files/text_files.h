#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kwb::agent {

// Whole-file reads and writes for the file tools. Errors are sentences for the model.
struct FileText {
    std::optional<std::string> text; // absent: the file does not exist (or cannot be read)
    std::string error;               // set when it exists but cannot be read
};

FileText readWholeFile(const std::string& path, std::size_t maxBytes = 64 << 20);

// A NUL byte in the first 8 KiB, as grep decides.
bool looksBinary(std::string_view text);

// Writes through a temporary file and a rename, so a reader (the evaluator, an editor) never
// sees half a file; creates missing parent folders and keeps the mode of a file it replaces.
// Returns an error sentence, empty on success.
std::string writeWholeFile(const std::string& path, std::string_view text);

} // namespace kwb::agent
