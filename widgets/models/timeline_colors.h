#pragma once

#include <QColor>
#include <string_view>

namespace kwb::ui {

// A kernel's colour comes from a hash of its name, so the same kernel has the same colour in
// every run, in both halves of a comparison and after a restart. Saturation and value are fixed
// so that black text stays readable on every hue.
QColor colorForName(std::string_view name);

// Dark or light text, whichever reads better on `background`.
QColor textColorOn(const QColor& background);

} // namespace kwb::ui
