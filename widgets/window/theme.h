#pragma once

#include "widgets/core/app_settings.h"

namespace kwb::ui {

// Fusion style with a light or dark palette: consistent on every desktop and offscreen.
void applyApplicationTheme(Theme theme);

} // namespace kwb::ui
