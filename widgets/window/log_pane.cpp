#include "widgets/window/log_pane.h"

#include <QDateTime>
#include <QFontDatabase>

namespace kwb::ui {

LogPane::LogPane(QWidget* parent) : QPlainTextEdit(parent) {
    setReadOnly(true);
    setMaximumBlockCount(5000);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setPlaceholderText(tr("Engine messages appear here: task loading, system detection, compiles, "
                          "evaluations."));
}

void LogPane::append(LogLevel level, const QString& message) {
    const char* tag = level == LogLevel::Error     ? "error"
                      : level == LogLevel::Warning ? "warn "
                                                   : "info ";
    appendPlainText(QStringLiteral("%1  %2  %3")
                        .arg(QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss.zzz")),
                             QLatin1String(tag), message));
}

} // namespace kwb::ui
