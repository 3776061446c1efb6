#include "widgets/editors/candidate_editors.h"

#include "widgets/common/empty_state_pane.h"
#include "widgets/diff/diff_view.h"
#include "widgets/editors/code_editor.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSaveFile>
#include <QStackedWidget>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace kwb::ui {
namespace {

const QString kUnsavedMark = QStringLiteral(" \u25CF"); // " ●" after an unsaved file's name

} // namespace

CandidateEditors::CandidateEditors(Theme theme, QWidget* parent)
    : QWidget(parent), theme_(theme), banner_(new QLabel(this)), tabs_(new QTabWidget(this)),
      empty_(new EmptyStatePane(tr("No candidate yet"), QString(), this)),
      stack_(new QStackedWidget(this)), save_(new QAction(tr("&Save"), this)),
      diffAgainstSaved_(new QAction(tr("Diff against saved"), this)) {
    // Scoped to the editors, so Ctrl+S elsewhere (a dialog, the message box) is not a save.
    save_->setShortcut(QKeySequence::Save);
    save_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(save_);
    connect(save_, &QAction::triggered, this, [this] {
        QString error;
        if (!saveCurrentFile(&error))
            emit saveFailed(error);
    });
    diffAgainstSaved_->setToolTip(tr("Compare the file on disk with the editor's text"));
    connect(diffAgainstSaved_, &QAction::triggered, this,
            &CandidateEditors::diffCurrentAgainstSaved);
    auto* diffButton = new QToolButton(this);
    diffButton->setDefaultAction(diffAgainstSaved_);
    diffButton->setAutoRaise(true);
    tabs_->setCornerWidget(diffButton, Qt::TopRightCorner);
    connect(tabs_, &QTabWidget::currentChanged, this,
            [this] { emit currentFileChanged(currentFile()); });
    banner_->setWordWrap(true);
    // Wrapped to the editors' width, never widening them (a long workspace path has no spaces).
    banner_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    banner_->setContentsMargins(8, 4, 8, 4);
    banner_->setAutoFillBackground(true);
    banner_->setBackgroundRole(QPalette::AlternateBase);
    tabs_->setDocumentMode(true);
    tabs_->setMovable(true);
    stack_->addWidget(tabs_);
    stack_->addWidget(empty_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(banner_);
    layout->addWidget(stack_, 1);
}

void CandidateEditors::clearTabs() {
    while (tabs_->count() > 0) {
        QWidget* page = tabs_->widget(0);
        tabs_->removeTab(0);
        page->deleteLater();
    }
}

void CandidateEditors::showCandidate(const QString& directory, bool readOnly,
                                     const QString& banner) {
    clearTabs();
    directory_ = directory;
    readOnly_ = readOnly;
    QDir root(directory);
    QStringList files;
    if (root.exists(QStringLiteral("model_new.py")))
        files << QStringLiteral("model_new.py");
    QDir kernels(root.filePath(QStringLiteral("kernels")));
    const QStringList kernelFiles =
        kernels.entryList({"*.cu", "*.cuh", "*.cpp", "*.h", "*.hpp"}, QDir::Files, QDir::Name);
    for (const QString& name : kernelFiles)
        files << QStringLiteral("kernels/") + name;

    for (const QString& relative : files) {
        QFile file(root.filePath(relative));
        auto* editor = new CodeEditor(languageForFile(relative), theme_, tabs_);
        if (file.open(QIODevice::ReadOnly | QIODevice::Text))
            editor->setSource(QString::fromUtf8(file.readAll()));
        else
            editor->setSource(tr("# cannot read %1: %2").arg(file.fileName(), file.errorString()));
        editor->setReadOnly(readOnly);
        editor->setObjectName(relative);
        tabs_->addTab(editor, relative);
        // The tab says when its text differs from the file (QScintilla's save point).
        connect(editor, &CodeEditor::modificationChanged, this, [this, editor](bool modified) {
            const int index = tabs_->indexOf(editor);
            if (index < 0)
                return;
            tabs_->setTabText(index, modified ? editor->objectName() + kUnsavedMark
                                              : editor->objectName());
            tabs_->setTabToolTip(index,
                                 modified ? tr("Unsaved changes (Ctrl+S saves)") : QString());
            emit unsavedChanged(hasUnsavedChanges());
        });
    }
    setBanner(banner);
    if (files.isEmpty()) {
        showNoCandidate(tr("%1 has no model_new.py or kernels/ files.").arg(directory));
        return;
    }
    stack_->setCurrentWidget(tabs_);
    emit filesShown();
}

void CandidateEditors::showNoCandidate(const QString& explanation) {
    clearTabs();
    directory_.clear();
    readOnly_ = true;
    banner_->hide();
    delete empty_;
    empty_ = new EmptyStatePane(tr("No candidate yet"), explanation, this);
    stack_->addWidget(empty_);
    stack_->setCurrentWidget(empty_);
    emit filesShown();
}

void CandidateEditors::applyTheme(Theme theme) {
    theme_ = theme;
    for (int i = 0; i < tabs_->count(); ++i)
        if (auto* editor = qobject_cast<CodeEditor*>(tabs_->widget(i)))
            editor->applyTheme(theme);
}

QStringList CandidateEditors::openFiles() const {
    QStringList names;
    for (int i = 0; i < tabs_->count(); ++i)
        names << tabName(i);
    return names;
}

QString CandidateEditors::tabName(int index) const {
    QWidget* page = tabs_->widget(index);
    return page && page->property("stepChanges").toBool() ? tabs_->tabText(index)
           : page                                         ? page->objectName()
                                                          : QString();
}

QStringList CandidateEditors::unsavedFiles() const {
    QStringList names;
    for (int i = 0; i < tabs_->count(); ++i) {
        auto* editor = qobject_cast<CodeEditor*>(tabs_->widget(i));
        if (editor && !editor->isReadOnly() && editor->isModified())
            names << editor->objectName();
    }
    return names;
}

bool CandidateEditors::hasUnsavedChanges() const {
    return !unsavedFiles().isEmpty();
}

bool CandidateEditors::saveAll(QString* error) {
    for (int i = 0; i < tabs_->count(); ++i) {
        auto* editor = qobject_cast<CodeEditor*>(tabs_->widget(i));
        if (!editor || editor->isReadOnly() || !editor->isModified())
            continue;
        tabs_->setCurrentIndex(i);
        if (!saveCurrentFile(error))
            return false;
    }
    return true;
}

bool CandidateEditors::selectFile(const QString& relativePath) {
    CodeEditor* editor = editorForFile(relativePath);
    if (!editor)
        return false;
    stack_->setCurrentWidget(tabs_);
    tabs_->setCurrentWidget(editor);
    return true;
}

CodeEditor* CandidateEditors::editorForFile(const QString& relativePath) const {
    for (int i = 0; i < tabs_->count(); ++i)
        if (tabName(i) == relativePath)
            return qobject_cast<CodeEditor*>(tabs_->widget(i));
    return nullptr;
}

bool CandidateEditors::saveCurrentFile(QString* error) {
    auto fail = [error](const QString& reason) {
        if (error)
            *error = reason;
        return false;
    };
    auto* editor = qobject_cast<CodeEditor*>(tabs_->currentWidget());
    if (directory_.isEmpty() || !editor || tabs_->currentIndex() == stepChangesTab())
        return fail(tr("No candidate file is open to save."));
    if (readOnly_ || editor->isReadOnly())
        return fail(tr("%1 is read-only here; open a workspace (File > Open Workspace…) to edit.")
                        .arg(editor->objectName()));
    const QString relative = editor->objectName();
    QSaveFile file(QDir(directory_).filePath(relative));
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
        return fail(tr("Cannot write %1: %2").arg(file.fileName(), file.errorString()));
    file.write(editor->text().toUtf8());
    if (!file.commit())
        return fail(tr("Cannot write %1: %2").arg(file.fileName(), file.errorString()));
    editor->setModified(false);
    emit fileSaved(directory_, relative);
    return true;
}

int CandidateEditors::stepChangesTab() const {
    for (int i = 0; i < tabs_->count(); ++i)
        if (tabs_->widget(i)->property("stepChanges").toBool())
            return i;
    return -1;
}

void CandidateEditors::showStepChanges(const QString& title, const QString& diffText) {
    if (const int old = stepChangesTab(); old >= 0) {
        QWidget* page = tabs_->widget(old);
        tabs_->removeTab(old);
        page->deleteLater();
    }
    if (title.isEmpty())
        return;
    auto* view = new CodeEditor(SourceLanguage::PlainText, theme_, tabs_);
    view->setSource(diffText);
    view->setReadOnly(true);
    view->setProperty("stepChanges", true);
    view->setObjectName(QStringLiteral("step-changes"));
    tabs_->setCurrentIndex(tabs_->addTab(view, title));
    stack_->setCurrentWidget(tabs_);
}

QString CandidateEditors::currentFile() const {
    QWidget* page = tabs_->currentWidget();
    if (!page || page->property("stepChanges").toBool())
        return {};
    return page->objectName();
}

bool CandidateEditors::jumpTo(const QString& relativePath, int line, int column) {
    CodeEditor* editor = editorForFile(relativePath);
    if (!editor)
        return false;
    stack_->setCurrentWidget(tabs_);
    tabs_->setCurrentWidget(editor);
    const int row = std::max(0, line - 1);
    editor->setCursorPosition(row, std::max(0, column - 1));
    editor->ensureLineVisible(row);
    editor->setFocus();
    return true;
}

void CandidateEditors::diffCurrentAgainstSaved() {
    const QString relative = currentFile();
    CodeEditor* editor = editorForFile(relative);
    if (directory_.isEmpty() || !editor)
        return;
    QFile file(QDir(directory_).filePath(relative));
    const QString saved = file.open(QIODevice::ReadOnly | QIODevice::Text)
                              ? QString::fromUtf8(file.readAll())
                              : QString();
    showDiffDialog(this, tr("%1: saved → editor").arg(relative), saved, editor->text());
}

} // namespace kwb::ui

namespace kwb::ui {

void CandidateEditors::setBanner(const QString& banner) {
    banner_->setText(banner);
    banner_->setVisible(!banner.isEmpty());
}

QString CandidateEditors::bannerText() const {
    return banner_->text();
}

} // namespace kwb::ui
