#pragma once

#include <QStyledItemDelegate>

namespace kwb::ui {

// Draws a ConversationModel row: a coloured kind stripe, the title, and the body when the row
// is unfolded (monospace for tool calls, results and diffs). Evaluation rows are cards with the
// verdict, reward, speed-ups and flags. Unfolded bodies are capped so one huge tool output
// cannot make a row taller than the screen; the cut is said in the row.
class ConversationDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    static constexpr int kMaxBodyLines = 60;

    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

    // The body as drawn: at most kMaxBodyLines lines plus a note of what was left out.
    static QString shownBody(const QString& body);
};

} // namespace kwb::ui
