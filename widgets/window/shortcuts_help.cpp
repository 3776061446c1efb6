#include "widgets/window/shortcuts_help.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace kwb::ui {
namespace {

QString plainText(QString text) {
    text.remove('&');
    text.remove(QStringLiteral("…"));
    return text.trimmed();
}

// A menu's title, or the nearest named widget, says where an action lives.
QString contextOf(const QAction* action) {
    for (QObject* owner = action->parent(); owner; owner = owner->parent()) {
        if (auto* menu = qobject_cast<QMenu*>(owner); menu && !menu->title().isEmpty())
            return plainText(menu->title());
        if (auto* widget = qobject_cast<QWidget*>(owner);
            widget && !widget->windowTitle().isEmpty())
            return plainText(widget->windowTitle());
    }
    for (QObject* widget : action->associatedObjects())
        if (auto* menu = qobject_cast<QMenu*>(widget); menu && !menu->title().isEmpty())
            return plainText(menu->title());
    return QObject::tr("Window");
}

} // namespace

QList<ShortcutEntry> collectShortcuts(const QWidget* root) {
    QList<ShortcutEntry> entries;
    for (const QAction* action : root->findChildren<QAction*>()) {
        for (const QKeySequence& keys : action->shortcuts()) {
            if (keys.isEmpty())
                continue;
            QString text = plainText(action->text());
            if (text.isEmpty())
                text = plainText(action->toolTip());
            entries.append({text, keys.toString(QKeySequence::NativeText), contextOf(action)});
        }
    }
    std::sort(entries.begin(), entries.end(), [](const ShortcutEntry& a, const ShortcutEntry& b) {
        return std::tie(a.context, a.action, a.keys) < std::tie(b.context, b.action, b.keys);
    });
    // The same action reached through two menus is listed once.
    entries.erase(std::unique(entries.begin(), entries.end(),
                              [](const ShortcutEntry& a, const ShortcutEntry& b) {
                                  return a.action == b.action && a.keys == b.keys &&
                                         a.context == b.context;
                              }),
                  entries.end());
    return entries;
}

ShortcutsDialog::ShortcutsDialog(const QList<ShortcutEntry>& entries, const QString& extraText,
                                 QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Keyboard Shortcuts"));
    auto* model = new QStandardItemModel(0, 3, this);
    model->setHorizontalHeaderLabels({tr("Keys"), tr("Action"), tr("Where")});
    for (const ShortcutEntry& entry : entries)
        model->appendRow({new QStandardItem(entry.keys), new QStandardItem(entry.action),
                          new QStandardItem(entry.context)});
    auto* table = new QTableView(this);
    table->setObjectName(QStringLiteral("shortcutsTable"));
    table->setModel(model);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    table->resizeColumnsToContents();
    auto* extra = new QLabel(extraText, this);
    extra->setObjectName(QStringLiteral("shortcutsExtra"));
    extra->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table, 1);
    layout->addWidget(extra);
    layout->addWidget(buttons);
    resize(640, 520);
}

} // namespace kwb::ui
