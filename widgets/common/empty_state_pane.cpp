#include "widgets/common/empty_state_pane.h"

#include <QLabel>
#include <QVBoxLayout>

namespace kwb::ui {

EmptyStatePane::EmptyStatePane(const QString& title, const QString& explanation, QWidget* parent)
    : QWidget(parent), heading_(new QLabel(title, this)), body_(new QLabel(explanation, this)),
      title_(title), explanation_(explanation) {
    QLabel* heading = heading_;
    QFont font = heading->font();
    font.setPointSizeF(font.pointSizeF() * 1.2);
    font.setBold(true);
    heading->setFont(font);
    heading->setAlignment(Qt::AlignCenter);
    QLabel* body = body_;
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

void EmptyStatePane::setText(const QString& title, const QString& explanation) {
    title_ = title;
    explanation_ = explanation;
    heading_->setText(title);
    body_->setText(explanation);
}

} // namespace kwb::ui
