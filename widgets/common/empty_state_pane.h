#pragma once

#include <QWidget>

class QLabel;

namespace kwb::ui {

// What a pane shows before it has data: what will appear here, and what produces it. Honest
// placeholders instead of fake content.
class EmptyStatePane : public QWidget {
    Q_OBJECT
public:
    EmptyStatePane(const QString& title, const QString& explanation, QWidget* parent = nullptr);

    // A pane whose state changed (a failed load says why here instead of the usual text).
    void setText(const QString& title, const QString& explanation);

    QString title() const { return title_; }
    QString explanation() const { return explanation_; }

private:
    QLabel* heading_;
    QLabel* body_;
    QString title_;
    QString explanation_;
};

} // namespace kwb::ui
