#include "widgets/agent/conversation_delegate.h"

#include "widgets/core/workbench_fonts.h"
#include "widgets/models/conversation_item.h"
#include "widgets/models/conversation_model.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QPainter>

namespace kwb::ui {
namespace {

constexpr int kMargin = 6;
constexpr int kStripe = 4;

using Kind = ConversationItemKind;

Kind kindOf(const QModelIndex& index) {
    return static_cast<Kind>(index.data(ConversationModel::KindRole).toInt());
}

QColor stripeColor(Kind kind, bool problem) {
    if (problem)
        return QColor(0xd0, 0x45, 0x3a);
    switch (kind) {
    case Kind::ModelText:
        return QColor(0x3b, 0x82, 0xd6);
    case Kind::ToolCall:
    case Kind::ToolResult:
        return QColor(0x8a, 0x6f, 0xd1);
    case Kind::Evaluation:
        return QColor(0x2f, 0xa5, 0x5a);
    case Kind::FileDiff:
        return QColor(0xc9, 0x8a, 0x1d);
    case Kind::User:
    case Kind::Steering:
        return QColor(0x1f, 0x9e, 0xa8);
    default:
        return QColor(0x88, 0x88, 0x88);
    }
}

bool monospaceBody(Kind kind) {
    return kind == Kind::ToolCall || kind == Kind::ToolResult || kind == Kind::FileDiff ||
           kind == Kind::System;
}

QString speedupText(double value) {
    return value > 0 ? QStringLiteral("%1x").arg(value, 0, 'f', 2) : QStringLiteral("n/a");
}

// The lines of an evaluation card under its title.
QString cardText(const QModelIndex& index) {
    QString text = index.data(ConversationModel::VerdictRole).toString();
    text += QStringLiteral("\nreward %1   speed-up vs eager %2   vs torch.compile %3")
                .arg(index.data(ConversationModel::RewardRole).toInt())
                .arg(speedupText(index.data(ConversationModel::SpeedupVsEagerRole).toDouble()),
                     speedupText(index.data(ConversationModel::SpeedupVsCompileRole).toDouble()));
    for (const QString& flag : index.data(ConversationModel::FlagsRole).toStringList())
        text += QStringLiteral("\nflag ") + flag;
    return text;
}

struct RowText {
    QString title;
    QString body;
    QFont titleFont;
    QFont bodyFont;
};

RowText rowText(const QStyleOptionViewItem& option, const QModelIndex& index) {
    RowText row;
    const Kind kind = kindOf(index);
    const bool foldable = index.data(ConversationModel::FoldableRole).toBool();
    const bool expanded = index.data(ConversationModel::ExpandedRole).toBool();
    row.title = (foldable ? (expanded ? QStringLiteral("▾ ") : QStringLiteral("▸ ")) : QString()) +
                index.data(ConversationModel::TitleRole).toString();
    row.titleFont = option.font;
    row.titleFont.setBold(true);
    row.bodyFont = monospaceBody(kind) ? codeFont(9) : option.font;
    if (kind == Kind::Evaluation)
        row.body = cardText(index);
    else if (expanded)
        row.body =
            ConversationDelegate::shownBody(index.data(ConversationModel::BodyRole).toString());
    return row;
}

int textWidth(const QStyleOptionViewItem& option) {
    int width = option.rect.width();
    if (const auto* view = qobject_cast<const QAbstractItemView*>(option.widget))
        width = view->viewport()->width();
    return std::max(120, width - 2 * kMargin - kStripe - 4);
}

QRect textRect(const QFont& font, int width, const QString& text) {
    return QFontMetrics(font).boundingRect(QRect(0, 0, width, 100000),
                                           Qt::TextWordWrap | Qt::TextWrapAnywhere, text);
}

} // namespace

QString ConversationDelegate::shownBody(const QString& body) {
    const QStringList lines = body.split(QLatin1Char('\n'));
    if (lines.size() <= kMaxBodyLines)
        return body;
    return lines.mid(0, kMaxBodyLines).join(QLatin1Char('\n')) +
           tr("\n… %1 more lines not shown").arg(lines.size() - kMaxBodyLines);
}

QSize ConversationDelegate::sizeHint(const QStyleOptionViewItem& option,
                                     const QModelIndex& index) const {
    const RowText row = rowText(option, index);
    const int width = textWidth(option);
    int height = kMargin + textRect(row.titleFont, width, row.title).height();
    if (!row.body.isEmpty())
        height += 4 + textRect(row.bodyFont, width, row.body).height();
    return {width, height + kMargin};
}

void ConversationDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                                 const QModelIndex& index) const {
    QStyleOptionViewItem background = option;
    initStyleOption(&background, index);
    background.text.clear();
    const QStyle* style = option.widget ? option.widget->style() : QApplication::style();
    style->drawPrimitive(QStyle::PE_PanelItemViewItem, &background, painter, option.widget);

    const RowText row = rowText(option, index);
    const Kind kind = kindOf(index);
    const bool problem = index.data(ConversationModel::ProblemRole).toBool();
    painter->save();
    const QRect r = option.rect;
    painter->fillRect(QRect(r.left() + 1, r.top() + 2, kStripe, r.height() - 4),
                      stripeColor(kind, problem));
    const int width = textWidth(option);
    const int left = r.left() + kStripe + kMargin;
    const QPalette& palette = option.palette;
    const bool selected = option.state & QStyle::State_Selected;
    painter->setPen(selected ? palette.color(QPalette::HighlightedText)
                             : palette.color(QPalette::Text));
    painter->setFont(row.titleFont);
    const QRect title = textRect(row.titleFont, width, row.title);
    painter->drawText(QRect(left, r.top() + kMargin, width, title.height()),
                      Qt::TextWordWrap | Qt::TextWrapAnywhere, row.title);
    if (!row.body.isEmpty()) {
        const QRect body = textRect(row.bodyFont, width, row.body);
        QRect area(left, r.top() + kMargin + title.height() + 4, width, body.height());
        if (kind == Kind::Evaluation) {
            QColor tint = stripeColor(kind, problem);
            tint.setAlpha(40);
            painter->fillRect(area.adjusted(-3, -2, 3, 2), tint);
        }
        painter->setFont(row.bodyFont);
        painter->drawText(area, Qt::TextWordWrap | Qt::TextWrapAnywhere, row.body);
    }
    painter->restore();
}

} // namespace kwb::ui
