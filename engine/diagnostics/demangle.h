#pragma once

#include <string>

namespace kwb::diagnostics {

// "_Z11tile_kernelPfPKf" -> "tile_kernel(float*, float const*)"; a name that is not an Itanium
// C++ symbol (an extern "C" kernel) comes back unchanged.
std::string demangleSymbol(const std::string& mangled);

} // namespace kwb::diagnostics
