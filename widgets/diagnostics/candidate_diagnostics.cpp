#include "widgets/diagnostics/candidate_diagnostics.h"

#include "widgets/core/kernel_diagnostics_controller.h"
#include "widgets/diagnostics/problems_pane.h"
#include "widgets/editors/assembly_view.h"
#include "widgets/editors/candidate_editors.h"
#include "widgets/editors/code_editor.h"
#include "widgets/editors/editor_diagnostics_overlay.h"
#include "widgets/models/problems_model.h"

#include <QDir>

namespace kwb::ui {

CandidateDiagnostics::CandidateDiagnostics(CandidateEditors* editors, QWidget* paneParent)
    : CandidateDiagnostics(editors, paneParent, [] {
          kwb::diagnostics::DiagnosticsService::Options options;
          options.debounce =
              std::chrono::milliseconds(KernelDiagnosticsController::kDefaultDebounceMs);
          options.wantSass = true;
          return options;
      }()) {}

CandidateDiagnostics::CandidateDiagnostics(CandidateEditors* editors, QWidget* paneParent,
                                           kwb::diagnostics::DiagnosticsService::Options options)
    : QObject(paneParent), editors_(editors),
      controller_(new KernelDiagnosticsController(std::move(options), this)),
      problems_(new ProblemsModel(this)), problemsPane_(new ProblemsPane(problems_, paneParent)),
      assembly_(new AssemblyView(paneParent)) {
    problemsPane_->setObjectName(QStringLiteral("problemsPane"));
    assembly_->setObjectName(QStringLiteral("assemblyView"));
    problemsPane_->hide();
    assembly_->hide();
    connect(editors, &CandidateEditors::filesShown, this, &CandidateDiagnostics::attachEditors);
    connect(editors, &CandidateEditors::currentFileChanged, this,
            &CandidateDiagnostics::refreshAssemblyView);
    connect(controller_, &KernelDiagnosticsController::resultReady, this,
            &CandidateDiagnostics::showResult);
    connect(controller_, &KernelDiagnosticsController::busyChanged, this, [this](bool busy) {
        if (busy)
            problemsPane_->setStatusText(tr("checking…"));
    });
    connect(problemsPane_, &ProblemsPane::problemActivated, this,
            &CandidateDiagnostics::jumpToProblem);
    // Source <-> PTX: a PTX line the reader picks takes the editor to its source line.
    connect(assembly_, &AssemblyView::sourceLineActivated, this,
            [this](int line) { editors_->jumpTo(editors_->currentFile(), line, 1); });
    attachEditors();
}

CandidateDiagnostics::~CandidateDiagnostics() = default;

QString CandidateDiagnostics::absolutePath(const QString& relativePath) const {
    return QDir::cleanPath(QDir(editors_->directory()).absoluteFilePath(relativePath));
}

void CandidateDiagnostics::attachEditors() {
    controller_->forgetAll();
    problems_->clear();
    checked_.clear();
    problems_->setRootDirectory(editors_->directory());
    problemsPane_->setStatusText(QString());
    if (editors_->directory().isEmpty()) {
        refreshAssemblyView();
        return;
    }
    for (const QString& relative : editors_->openFiles()) {
        CodeEditor* editor = editors_->editorForFile(relative);
        if (!editor || !KernelDiagnosticsController::checksFile(relative))
            continue;
        const QString path = absolutePath(relative);
        checked_.insert(path, editor);
        EditorDiagnosticsOverlay::forEditor(editor);
        connect(editor, &QsciScintilla::textChanged, this,
                [this, path, editor] { controller_->submit(path, editor->text()); });
        // ... and the editor's cursor line marks its PTX lines.
        connect(editor, &QsciScintilla::cursorPositionChanged, this,
                [this, relative](int line, int) {
                    if (editors_->currentFile() == relative)
                        assembly_->showSourceLine(line + 1);
                });
        controller_->submit(path, editor->text());
    }
    refreshAssemblyView();
}

void CandidateDiagnostics::showResult(
    const QString& path, std::shared_ptr<const kwb::diagnostics::KernelCheckResult> result) {
    CodeEditor* editor = checked_.value(path);
    if (!editor)
        return;
    // Squiggles only for this file's own lines; a header's messages go to the problems list,
    // and position-less ones (ptxas, the nvcc driver) sit on line 1.
    std::vector<kwb::Diagnostic> own;
    for (const kwb::Diagnostic& diagnostic : result->diagnostics) {
        if (diagnostic.file.empty() || QString::fromStdString(diagnostic.file) == path)
            own.push_back(diagnostic);
    }
    auto* overlay = EditorDiagnosticsOverlay::forEditor(editor);
    overlay->setDiagnostics(own);
    // A clean syntax-only pass keeps the last annotations until its full compile lands.
    if (!result->syntaxOnly)
        overlay->setKernelResources(result->kernels);
    else if (result->errorCount() > 0)
        overlay->setKernelResources({});
    problems_->setDiagnostics(path, result->diagnostics);
    problemsPane_->setStatusText(tr("%1 · %2%3 · %4 ms")
                                     .arg(QDir(editors_->directory()).relativeFilePath(path),
                                          QString::fromStdString(toString(result->compilePath)),
                                          result->syntaxOnly ? tr(" (syntax)") : QString())
                                     .arg(result->compileMs, 0, 'f', 0));
    if (path == absolutePath(editors_->currentFile()))
        refreshAssemblyView();
    emit resultShown(path);
}

void CandidateDiagnostics::refreshAssemblyView() {
    const QString relative = editors_->currentFile();
    if (relative.isEmpty() || !KernelDiagnosticsController::checksFile(relative)) {
        assembly_->showNothing(tr("PTX and SASS appear here for the current .cu file."));
        return;
    }
    const QString path = absolutePath(relative);
    const auto compiled = controller_->latestCompiledResult(path);
    const auto latest = controller_->latestResult(path);
    const bool stale = compiled && latest && latest->errorCount() > 0;
    assembly_->showResult(relative, compiled, stale);
    if (CodeEditor* editor = editors_->editorForFile(relative)) {
        int line = 0, column = 0;
        editor->getCursorPosition(&line, &column);
        assembly_->showSourceLine(line + 1);
    }
}

void CandidateDiagnostics::jumpToProblem(const QString& file, int line, int column) {
    const QString relative = QDir(editors_->directory()).relativeFilePath(file);
    editors_->jumpTo(relative, line, column);
}

} // namespace kwb::ui
