#pragma once

#include "widgets/core/app_settings.h"

#include <QWidget>

class QAction;
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
    // The line above the tabs: whose files these are, and what this machine can do with them.
    void setBanner(const QString& banner);
    QString bannerText() const;
    void showNoCandidate(const QString& explanation);
    void applyTheme(Theme theme);

    QStringList openFiles() const; // tab titles, e.g. "model_new.py", "kernels/gelu.cu"
    // Editable files whose text differs from the file on disk (their tabs end in " ●").
    QStringList unsavedFiles() const;
    bool hasUnsavedChanges() const;
    // Writes every unsaved file (each a save, as Ctrl+S); false at the first that fails.
    bool saveAll(QString* error = nullptr);
    // Makes the file's tab current without moving its cursor or taking the focus.
    bool selectFile(const QString& relativePath);
    CodeEditor* editorForFile(const QString& relativePath) const;
    QString directory() const { return directory_; } // empty when no candidate is shown
    bool isReadOnly() const { return readOnly_; }

    // Writes the current tab back to its file (Ctrl+S). False, with a reason in `error`, when
    // nothing editable is open or the write fails.
    bool saveCurrentFile(QString* error = nullptr);
    QAction* saveAction() const { return save_; }

    // A read-only tab with what one agent step changed. Replaces an earlier step's tab; an empty
    // title removes it.
    void showStepChanges(const QString& title, const QString& diffText);
    int stepChangesTab() const; // -1 when none

    // The tab's file relative to directory(), e.g. "kernels/gelu.cu"; empty for none.
    QString currentFile() const;
    // Shows `relativePath` with the cursor at 1-based line and column (0: first).
    bool jumpTo(const QString& relativePath, int line, int column);
    // Opens a diff of the current file: its text on disk against the editor's buffer.
    void diffCurrentAgainstSaved();
    QAction* diffAgainstSavedAction() const { return diffAgainstSaved_; }

signals:
    void fileSaved(const QString& directory, const QString& relativePath);
    void saveFailed(const QString& reason);
    // The editors were (re)built: the old CodeEditors are going away, new ones are in place.
    void filesShown();
    void currentFileChanged(const QString& relativePath);
    void unsavedChanged(bool anyUnsaved);

private:
    void clearTabs();
    QString tabName(int index) const; // the file's path, without the unsaved mark

    Theme theme_;
    QString directory_;
    bool readOnly_ = true;
    QLabel* banner_;
    QTabWidget* tabs_;
    EmptyStatePane* empty_;
    QStackedWidget* stack_;
    QAction* save_;
    QAction* diffAgainstSaved_;
};

} // namespace kwb::ui
