#include "engine/diagnostics/diagnostic.h"

namespace kwb {

std::string toString(Severity severity) {
    switch (severity) {
    case Severity::Note:
        return "note";
    case Severity::Warning:
        return "warning";
    case Severity::Error:
        return "error";
    }
    return "error";
}

std::string formatDiagnostic(const Diagnostic& d) {
    std::string text = d.file.empty() ? std::string("<source>") : d.file;
    if (d.line > 0) {
        text += ":" + std::to_string(d.line);
        if (d.column > 0)
            text += ":" + std::to_string(d.column);
    }
    return text + ": " + toString(d.severity) + ": " + d.message;
}

} // namespace kwb
