#include "widgets/common/empty_state_pane.h"

#include <QLabel>
#include <QVBoxLayout>

namespace kwb::ui {

EmptyStatePane::EmptyStatePane(const QString& title, const QString& explanation, QWidget* parent)
    : QWidget(parent), title_(title), explanation_(explanation) {
    auto* heading = new QLabel(title, this);
    QFont font = heading->font();
    font.setPointSizeF(font.pointSizeF() * 1.2);
    font.setBold(true);
    heading->setFont(font);
    heading->setAlignment(Qt::AlignCenter);
    auto* body = new QLabel(explanation, this);
    body->setWordWrap(true);
    body->setAlignment(Qt::AlignCenter);
    body->setForegroundRole(QPalette::PlaceholderText);
    body->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* layout = new QVBoxLayout(this);
    layout->addStretch(1);
    layout->addWidget(heading);
    layout->addWidget(body);
    layout->addStretch(2);
}

} // namespace kwb::ui
