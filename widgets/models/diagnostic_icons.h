#pragma once

#include "engine/diagnostics/diagnostic.h"

#include <QColor>
#include <QIcon>
#include <QImage>

namespace kwb::ui {

// One look for a severity everywhere: the editor's squiggle and margin marker, and the problems
// list. Errors red, warnings amber, notes blue.
QColor severityColor(kwb::Severity severity);

// A round badge with "!" (error), "i" (note) or a triangle (warning), `size` pixels square.
QImage severityImage(kwb::Severity severity, int size);
QIcon severityIcon(kwb::Severity severity);

} // namespace kwb::ui
