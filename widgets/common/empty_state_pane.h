#pragma once

#include <QWidget>

namespace kwb::ui {

// What a pane shows before it has data: what will appear here, and what produces it. Honest
// placeholders instead of fake content.
class EmptyStatePane : public QWidget {
    Q_OBJECT
public:
    EmptyStatePane(const QString& title, const QString& explanation, QWidget* parent = nullptr);

    QString title() const { return title_; }
    QString explanation() const { return explanation_; }

private:
    QString title_;
    QString explanation_;
};

} // namespace kwb::ui
