#pragma once

#include <QString>

namespace kwb::ui {

// "850 ns", "12.4 µs", "3.25 ms", "1.500 s": three significant figures in the largest unit that
// keeps the number at least 1, so durations and ruler labels read the same everywhere.
QString formatDuration(double ns);

// A ruler label for an absolute position: the unit follows the tick step, so neighbouring labels
// differ in their last digits ("1.2340 ms", "1.2345 ms") instead of all reading "1.23 ms".
QString formatTimeAtStep(double ns, double stepNs);

} // namespace kwb::ui
