#include "widgets/candidate_editors.h"

#include "widgets/code_editor.h"
#include "widgets/empty_state_pane.h"

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QStackedWidget>
#include <QTabWidget>
#include <QVBoxLayout>

namespace kwb::ui {

CandidateEditors::CandidateEditors(Theme theme, QWidget* parent)
    : QWidget(parent), theme_(theme), banner_(new QLabel(this)), tabs_(new QTabWidget(this)),
      empty_(new EmptyStatePane(tr("No candidate yet"), QString(), this)),
      stack_(new QStackedWidget(this)) {
    banner_->setWordWrap(true);
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
    }
    banner_->setText(banner);
    banner_->setVisible(!banner.isEmpty());
    if (files.isEmpty()) {
        showNoCandidate(tr("%1 has no model_new.py or kernels/ files.").arg(directory));
        return;
    }
    stack_->setCurrentWidget(tabs_);
}

void CandidateEditors::showNoCandidate(const QString& explanation) {
    clearTabs();
    banner_->hide();
    delete empty_;
    empty_ = new EmptyStatePane(tr("No candidate yet"), explanation, this);
    stack_->addWidget(empty_);
    stack_->setCurrentWidget(empty_);
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
        names << tabs_->tabText(i);
    return names;
}

CodeEditor* CandidateEditors::editorForFile(const QString& relativePath) const {
    for (int i = 0; i < tabs_->count(); ++i)
        if (tabs_->tabText(i) == relativePath)
            return qobject_cast<CodeEditor*>(tabs_->widget(i));
    return nullptr;
}

} // namespace kwb::ui
