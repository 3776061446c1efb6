#include "widgets/models/diagnostic_icons.h"

#include <QPainter>
#include <QPainterPath>

namespace kwb::ui {

QColor severityColor(kwb::Severity severity) {
    switch (severity) {
    case kwb::Severity::Error:
        return QColor(0xe5, 0x39, 0x35);
    case kwb::Severity::Warning:
        return QColor(0xf0, 0xa0, 0x20);
    case kwb::Severity::Note:
        break;
    }
    return QColor(0x3d, 0x8b, 0xd9);
}

QImage severityImage(kwb::Severity severity, int size) {
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(Qt::NoPen);
    painter.setBrush(severityColor(severity));
    const QRectF box(1, 1, size - 2, size - 2);
    if (severity == kwb::Severity::Warning) {
        QPainterPath triangle;
        triangle.moveTo(box.center().x(), box.top());
        triangle.lineTo(box.right(), box.bottom());
        triangle.lineTo(box.left(), box.bottom());
        triangle.closeSubpath();
        painter.drawPath(triangle);
    } else {
        painter.drawEllipse(box);
    }
    QFont font = painter.font();
    font.setBold(true);
    font.setPixelSize(std::max(6, size * 2 / 3));
    painter.setFont(font);
    painter.setPen(severity == kwb::Severity::Warning ? Qt::black : Qt::white);
    QRectF textBox = box;
    if (severity == kwb::Severity::Warning)
        textBox.setTop(box.top() + size / 6.0);
    painter.drawText(textBox, Qt::AlignCenter,
                     severity == kwb::Severity::Note ? QStringLiteral("i") : QStringLiteral("!"));
    return image;
}

QIcon severityIcon(kwb::Severity severity) {
    QIcon icon;
    for (int size : {12, 16, 24})
        icon.addPixmap(QPixmap::fromImage(severityImage(severity, size)));
    return icon;
}

} // namespace kwb::ui
