#pragma once

#include <QFont>

namespace kwb::ui {

// The fonts the workbench draws code and text with. Code is always in DejaVu Sans Mono when it
// is installed (tools/setup.sh installs fonts-dejavu-core; the .deb depends on it), whatever
// fontconfig's "monospace" resolves to: column layouts, the diff view and the screenshot
// baselines must not change with a desktop's font choice (Noto Sans Mono is a common default).
// Without it, the system's fixed-width font is used.
QFont codeFont(int pointSize = 10);

// The interface font, pinned the same way: DejaVu Sans 9 pt. The GUI keeps the desktop's own
// interface font; offscreen renders (tests, --screenshot for the docs) call pinInterfaceFont so
// that an image is the same on every machine.
QFont interfaceFont();
void pinInterfaceFont();

// Whether the pinned families are installed, for a test's or the About box's diagnosis.
bool pinnedFontsInstalled();

} // namespace kwb::ui
