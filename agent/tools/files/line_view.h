#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::agent {

// Lines of a text without their line ends ("a\nb\n" has two lines, "a\nb" too).
std::vector<std::string_view> splitLines(std::string_view text);

// Line number (1-based) of the byte at `offset`.
std::size_t lineNumberAt(std::string_view text, std::size_t offset);

// `cat -n` style: the number right-aligned in six columns, a tab, the line. Lines longer than
// `maxLineChars` are cut with a note, so one minified line cannot fill the model's context.
std::string numberedLines(const std::vector<std::string_view>& lines, std::size_t firstLine,
                          std::size_t count, std::size_t maxLineChars = 2000);

} // namespace kwb::agent
