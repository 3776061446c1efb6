#include "widgets/models/timeline_format.h"

#include <cmath>

namespace kwb::ui {

namespace {
struct Unit {
    double ns;
    const char* suffix;
};
constexpr Unit kUnits[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1.0, "ns"}};

const Unit& unitFor(double magnitudeNs) {
    for (const Unit& unit : kUnits)
        if (magnitudeNs >= unit.ns)
            return unit;
    return kUnits[3];
}
} // namespace

QString formatDuration(double ns) {
    const double magnitude = std::abs(ns);
    const Unit& unit = unitFor(magnitude);
    const double value = ns / unit.ns;
    if (unit.ns == 1.0)
        return QStringLiteral("%1 ns").arg(std::llround(value));
    const double absValue = std::abs(value);
    const int decimals = absValue >= 100.0 ? 1 : (absValue >= 10.0 ? 2 : 3);
    return QStringLiteral("%1 %2").arg(value, 0, 'f', decimals).arg(QString::fromUtf8(unit.suffix));
}

QString formatTimeAtStep(double ns, double stepNs) {
    const Unit& unit = unitFor(std::abs(ns) > 0.0 ? std::abs(ns) : stepNs);
    const double stepInUnit = stepNs / unit.ns;
    int decimals = 0;
    while (decimals < 9 && stepInUnit * std::pow(10.0, decimals) < 0.999)
        ++decimals;
    return QStringLiteral("%1 %2")
        .arg(ns / unit.ns, 0, 'f', decimals)
        .arg(QString::fromUtf8(unit.suffix));
}

} // namespace kwb::ui
