#pragma once

#include <QPlainTextEdit>

namespace kwb::ui {

enum class LogLevel { Info, Warning, Error };

// The application's event log: what the engine did, when, and what went wrong. Bounded, so a
// flood of messages cannot exhaust memory.
class LogPane : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit LogPane(QWidget* parent = nullptr);

    void append(LogLevel level, const QString& message);
};

} // namespace kwb::ui
