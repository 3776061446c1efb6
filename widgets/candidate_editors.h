#pragma once

#include "widgets/app_settings.h"

#include <QWidget>

class QLabel;
class QStackedWidget;
class QTabWidget;

namespace kwb::ui {

class CodeEditor;
class EmptyStatePane;

// The candidate's sources: `model_new.py` first, then every file under `kernels/`, one tab each.
class CandidateEditors : public QWidget {
    Q_OBJECT
public:
    explicit CandidateEditors(Theme theme, QWidget* parent = nullptr);

    // Opens the candidate files of `directory`. `banner` says whose files these are.
    void showCandidate(const QString& directory, bool readOnly, const QString& banner);
    void showNoCandidate(const QString& explanation);
    void applyTheme(Theme theme);

    QStringList openFiles() const; // tab titles, e.g. "model_new.py", "kernels/gelu.cu"
    CodeEditor* editorForFile(const QString& relativePath) const;

private:
    void clearTabs();

    Theme theme_;
    QLabel* banner_;
    QTabWidget* tabs_;
    EmptyStatePane* empty_;
    QStackedWidget* stack_;
};

} // namespace kwb::ui
