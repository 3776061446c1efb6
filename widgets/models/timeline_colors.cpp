#include "widgets/models/timeline_colors.h"

#include <cstdint>

namespace kwb::ui {

QColor colorForName(std::string_view name) {
    // FNV-1a: stable across platforms and Qt versions, unlike qHash's seeded hashing.
    std::uint64_t hash = 1469598103934665603ull;
    for (const char c : name) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ull;
    }
    // 24 hues 15 degrees apart, three brightness and two saturation steps: neighbouring names
    // that land on close hues still differ in shade, which a continuous hue would not give.
    hash ^= hash >> 29; // fold the high bits in; FNV's low bits alone vary too little
    const int hue = static_cast<int>(hash % 24) * 15;
    const int saturation = 105 + 55 * static_cast<int>((hash >> 8) % 2);
    const int value = 190 + 25 * static_cast<int>((hash >> 16) % 3);
    // Quantised to 8-bit RGB: exactly the colour a pixel of the drawn box reads back as.
    return QColor(QColor::fromHsv(hue, saturation, value).rgb());
}

QColor textColorOn(const QColor& background) {
    const double luminance =
        0.299 * background.redF() + 0.587 * background.greenF() + 0.114 * background.blueF();
    return luminance > 0.55 ? QColor(20, 20, 20) : QColor(245, 245, 245);
}

} // namespace kwb::ui
