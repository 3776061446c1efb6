#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kwb::model {

// GPT-2's byte-level alphabet, which byte-level BPE vocabularies (GPT-2, Llama 3, Qwen2,
// SmolLM) are written in: each of the 256 byte values is one printable code point (the
// printable Latin-1 bytes stand for themselves, the others move to U+0100 and up, so a space
// reads "Ġ").
std::string bytesToSymbols(std::string_view bytes); // UTF-8 of the mapped code points
// The inverse; nullopt when `symbols` holds a code point outside the alphabet.
std::optional<std::string> symbolsToBytes(std::string_view symbols);

// `text` with every ill-formed UTF-8 sequence replaced by U+FFFD, one per maximal ill-formed
// subpart (what Python's errors="replace" gives); well-formed text comes back unchanged. The
// split patterns match code points, and text read from files or the model's tools is bytes:
// repaired once, every later match can skip PCRE2's own check.
std::string repairedUtf8(std::string_view text);

} // namespace kwb::model
