#include "widgets/window/log_pane.h"

#include "widgets/core/workbench_fonts.h"

#include <QDateTime>

namespace kwb::ui {

LogPane::LogPane(QWidget* parent) : QPlainTextEdit(parent) {
    setReadOnly(true);
    setMaximumBlockCount(5000);
    setFont(codeFont(9));
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
