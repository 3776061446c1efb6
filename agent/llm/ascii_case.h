#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace kwb::agent {

// `text` in ASCII lower case, for the protocol words HTTP and the model APIs compare without
// regard to case: header names, error types, stop reasons. The one copy the providers and the
// key handling share.
inline std::string asciiLowerCase(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

} // namespace kwb::agent
