#pragma once

#include "engine/diagnostics/resource_usage.h"

#include <QString>

namespace kwb::ui {

// "32 regs · 1.0 KB smem · 0 B spill · ≤1024 thr": what a kernel costs, short enough to sit
// under its declaration in the editor.
QString kernelResourceSummary(const kwb::diagnostics::ResourceUsage& usage);

// "1.0 KB", "512 B".
QString byteSizeText(long bytes);

// The bare identifier of a demangled kernel name: "ns::gelu<float>(float const*, int)" -> "gelu".
QString kernelIdentifier(const std::string& demangledName);

// The 0-based line where `source` declares the __global__ function `identifier` (the line with
// its name; "__global__" may sit up to three lines above it), or -1.
int kernelDeclarationLine(const QString& source, const QString& identifier);

} // namespace kwb::ui
