#pragma once

#include <string>

namespace kwb {

// The libtorch linked into this binary: "libtorch 2.11.0 (CUDA build, no GPU visible)".
// Kept in its own translation unit: torch headers are slow to compile and clash with Qt macros.
std::string libtorchSummary();

} // namespace kwb
