#include "widgets/core/workbench_fonts.h"

#include <QFontDatabase>
#include <QGuiApplication>

namespace kwb::ui {
namespace {

const QString kCodeFamily = QStringLiteral("DejaVu Sans Mono");
const QString kInterfaceFamily = QStringLiteral("DejaVu Sans");

bool installed(const QString& family) {
    return QFontDatabase::families().contains(family);
}

} // namespace

QFont codeFont(int pointSize) {
    QFont font = installed(kCodeFamily) ? QFont(kCodeFamily)
                                        : QFontDatabase::systemFont(QFontDatabase::FixedFont);
    font.setStyleHint(QFont::Monospace);
    font.setFixedPitch(true);
    font.setPointSize(pointSize);
    return font;
}

QFont interfaceFont() {
    QFont font = installed(kInterfaceFamily) ? QFont(kInterfaceFamily) : QGuiApplication::font();
    font.setPointSize(9);
    return font;
}

void pinInterfaceFont() {
    QGuiApplication::setFont(interfaceFont());
}

bool pinnedFontsInstalled() {
    return installed(kCodeFamily) && installed(kInterfaceFamily);
}

} // namespace kwb::ui
