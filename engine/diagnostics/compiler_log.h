#pragma once

#include "engine/diagnostics/diagnostic.h"

#include <string>
#include <vector>

namespace kwb::diagnostics {

// Reads the messages of every compiler stage a .cu file meets, from NVRTC's log or nvcc's stderr:
// - the CUDA front end (EDG): "file(12): error: text", followed by the source line and a caret
//   line; the caret gives the column;
// - the host compiler (gcc/clang): "file:12:7: error: text" (also "fatal error");
// - ptxas: "ptxas warning : text" / "ptxas error   : text" (no position; file stays empty);
// - the nvcc driver itself: "nvcc fatal   : text" / "nvcc error   : text".
// Everything else (ptxas info, "N errors detected", include traces) is skipped.
std::vector<Diagnostic> parseCompilerLog(const std::string& log);

// Rewrites `from` to `to` in each diagnostic's file: NVRTC and nvcc see a temporary or short name,
// the editor wants the workspace path.
void renameDiagnosticFile(std::vector<Diagnostic>& diagnostics, const std::string& from,
                          const std::string& to);

} // namespace kwb::diagnostics
