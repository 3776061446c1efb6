#pragma once

#include "engine/diagnostics/diagnostics_service.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <memory>

class QWidget;

namespace kwb::ui {

class AssemblyView;
class CandidateEditors;
class CodeEditor;
class KernelDiagnosticsController;
class ProblemsModel;
class ProblemsPane;

// Connects the candidate editors to the instant loop's diagnostics: every .cu/.cuh tab is
// checked when shown and on each edit (debounced by the controller), and each result is drawn
// into its editor (squiggles, markers, resource annotations), into the problems list, and, for
// the current tab, into the PTX/SASS view. Owns the controller and the two panes' widgets
// (parented to `paneParent` until a dock takes them).
class CandidateDiagnostics : public QObject {
    Q_OBJECT
public:
    CandidateDiagnostics(CandidateEditors* editors, QWidget* paneParent);
    // Tests pass their own service options (no debounce, a fake check).
    CandidateDiagnostics(CandidateEditors* editors, QWidget* paneParent,
                         kwb::diagnostics::DiagnosticsService::Options options);
    ~CandidateDiagnostics() override;

    KernelDiagnosticsController* controller() const { return controller_; }
    ProblemsModel* problemsModel() const { return problems_; }
    ProblemsPane* problemsPane() const { return problemsPane_; }
    AssemblyView* assemblyView() const { return assembly_; }
    // The absolute path the checks use for a tab, e.g. "<candidate>/kernels/gelu.cu".
    QString absolutePath(const QString& relativePath) const;

signals:
    // A result was drawn (after the editor, the problems and the assembly view took it).
    void resultShown(const QString& absolutePath);

private:
    void attachEditors();
    void showResult(const QString& path,
                    std::shared_ptr<const kwb::diagnostics::KernelCheckResult> result);
    void refreshAssemblyView();
    void jumpToProblem(const QString& file, int line, int column);

    CandidateEditors* editors_;
    KernelDiagnosticsController* controller_;
    ProblemsModel* problems_;
    ProblemsPane* problemsPane_;
    AssemblyView* assembly_;
    QHash<QString, QPointer<CodeEditor>> checked_; // absolute path -> its editor
};

} // namespace kwb::ui
