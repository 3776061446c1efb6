#pragma once

#include <QDialog>
#include <QList>
#include <QString>

namespace kwb::ui {

// One keyboard shortcut as the help page lists it.
struct ShortcutEntry {
    QString action;  // "Save", "Pause the agent"
    QString keys;    // in the platform's native text, e.g. "Ctrl+S"
    QString context; // the menu or pane that owns it
};

// Every QAction with a shortcut below `root`, read from the live widgets rather than kept as a
// second list that would drift from them. Sorted by context, then action.
QList<ShortcutEntry> collectShortcuts(const QWidget* root);

// Help > Keyboard Shortcuts: the collected table, plus `extraText` for keys that are not actions
// (the timeline's mouse and WASD navigation).
class ShortcutsDialog : public QDialog {
    Q_OBJECT
public:
    ShortcutsDialog(const QList<ShortcutEntry>& entries, const QString& extraText,
                    QWidget* parent = nullptr);
};

} // namespace kwb::ui
