#pragma once

#include <string>
#include <vector>

namespace kwb {

enum class Severity { Note, Warning, Error };

std::string toString(Severity severity);

// One compiler message with a source position; line and column are 1-based, 0 when unknown.
struct Diagnostic {
    std::string file;
    int line = 0;
    int column = 0;
    Severity severity = Severity::Error;
    std::string message;
};

// "kernels/gemm.cu:42:7: error: ..."
std::string formatDiagnostic(const Diagnostic& diagnostic);

} // namespace kwb
