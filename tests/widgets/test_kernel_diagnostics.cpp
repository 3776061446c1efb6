// The instant loop in the editors, with the real NVRTC: a broken kernel typed into the editor
// gets a squiggle, a marker, a tooltip and a problems row; fixing it clears them; the kernel
// line carries its resource usage; the PTX view shows the PTX.
#include "engine/system/resource_paths.h"
#include "widgets/core/app_settings.h"
#include "widgets/core/kernel_diagnostics_controller.h"
#include "widgets/diagnostics/candidate_diagnostics.h"
#include "widgets/diagnostics/problems_pane.h"
#include "widgets/diff/diff_view.h"
#include "widgets/editors/assembly_view.h"
#include "widgets/editors/candidate_editors.h"
#include "widgets/editors/code_editor.h"
#include "widgets/editors/editor_diagnostics_overlay.h"
#include "widgets/models/diff_model.h"
#include "widgets/models/kernel_resource_text.h"
#include "widgets/models/problems_model.h"
#include "widgets/window/main_window.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

using namespace kwb;
using namespace kwb::ui;

namespace {

constexpr int kCompileTimeoutMs = 60000; // NVRTC on a loaded 2-core machine

const char* const kGoodKernel = R"(#include <cuda_runtime.h>

// element-wise add
__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? a[i] : 0.0f;
    __syncthreads();
    if (i < n)
        out[i] = tile[threadIdx.x] + b[i];
}
)";

void writeFile(const QString& path, const QByteArray& text) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

kwb::diagnostics::ResourceUsage usage(int registers, long smem, long spills, int threads) {
    kwb::diagnostics::ResourceUsage u;
    u.registers = registers;
    u.staticSharedBytes = smem;
    u.spillStoreBytes = spills;
    u.maxThreadsPerBlock = threads;
    return u;
}

} // namespace

class TestKernelDiagnostics : public QObject {
    Q_OBJECT
private slots:
    void formatsResourcesAndFindsKernelLines() {
        QCOMPARE(kernelResourceSummary(usage(32, 1024, 0, 1024)),
                 QStringLiteral("32 regs · 1.0 KB smem · 0 B spill · ≤1024 thr"));
        auto spilling = usage(255, 100, 48, 256);
        spilling.localBytes = 64;
        spilling.maxThreadsFromLaunchBounds = true;
        QCOMPARE(kernelResourceSummary(spilling),
                 QStringLiteral("255 regs · 100 B smem · 48 B spill · 64 B stack · ≤256 thr "
                                "(launch bounds)"));
        QCOMPARE(kernelIdentifier("add_kernel(float const*, float*, int)"),
                 QStringLiteral("add_kernel"));
        QCOMPARE(kernelIdentifier("void ns::gemm<float, 4>(float const*, int)"),
                 QStringLiteral("gemm"));
        QCOMPARE(kernelIdentifier("plain"), QStringLiteral("plain"));
        QCOMPARE(kernelIdentifier("(anonymous namespace)::gelu_kernel(float4 const*, long)"),
                 QStringLiteral("gelu_kernel"));
        const QString source = "__device__ float add_kernel_helper(float x);\n"
                               "void add_kernel(int); // host, not a kernel\n"
                               "template <int N>\n"
                               "__global__ void __launch_bounds__(256)\n"
                               "add_kernel(const float* a) {\n"
                               "}\n";
        QCOMPARE(kernelDeclarationLine(source, "add_kernel"), 4);
        QCOMPARE(kernelDeclarationLine(source, "missing"), -1);
    }

    void problemsModelPassesTheTesterThroughUpdates() {
        ProblemsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRootDirectory("/ws");
        model.setDiagnostics("/ws/kernels/b.cu",
                             {{"/ws/kernels/b.cu", 9, 2, kwb::Severity::Warning, "unused"},
                              {"/ws/kernels/b.cu", 3, 5, kwb::Severity::Error, "bad"}});
        model.setDiagnostics("/ws/kernels/a.cu", {{"", 0, 0, kwb::Severity::Error, "ptxas"}});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(0, ProblemsModel::FileColumn).data().toString(),
                 QStringLiteral("kernels/a.cu"));
        QCOMPARE(model.index(1, ProblemsModel::PositionColumn).data().toString(),
                 QStringLiteral("3:5"));
        QCOMPARE(model.index(2, ProblemsModel::MessageColumn).data().toString(),
                 QStringLiteral("unused"));
        QCOMPARE(model.errorCount(), 2);
        QCOMPARE(model.warningCount(), 1);
        model.setDiagnostics("/ws/kernels/b.cu", {});
        QCOMPARE(model.rowCount(), 1);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void brokenKernelIsMarkedAndFixingItClearsTheMarks() {
        QTemporaryDir workspace;
        QVERIFY(workspace.isValid());
        const QString cuPath = workspace.filePath("kernels/add.cu");
        writeFile(workspace.filePath("model_new.py"), "import torch\n");
        writeFile(cuPath, kGoodKernel);

        QWidget host;
        CandidateEditors editors(Theme::Light, &host);
        kwb::diagnostics::DiagnosticsService::Options options;
        options.debounce = std::chrono::milliseconds(50);
        options.wantSass = true;
        CandidateDiagnostics diagnostics(&editors, &host, options);
        QAbstractItemModelTester tester(diagnostics.problemsModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        editors.showCandidate(workspace.path(), false, {});
        editors.jumpTo("kernels/add.cu", 1, 1);
        QCOMPARE(editors.currentFile(), QStringLiteral("kernels/add.cu"));
        CodeEditor* editor = editors.editorForFile("kernels/add.cu");
        QVERIFY(editor);
        auto* overlay = EditorDiagnosticsOverlay::forEditor(editor);
        auto* controller = diagnostics.controller();
        const QString absolute = diagnostics.absolutePath("kernels/add.cu");

        // The clean kernel: a full compile lands with resources and PTX.
        QTRY_VERIFY_WITH_TIMEOUT(controller->latestCompiledResult(absolute) != nullptr,
                                 kCompileTimeoutMs);
        QCOMPARE(diagnostics.problemsModel()->rowCount(), 0);
        const int kernelLine = 3; // 0-based: "__global__ void add_kernel(...)"
        QTRY_VERIFY_WITH_TIMEOUT(overlay->annotatedLines().contains(kernelLine), kCompileTimeoutMs);
        const QString annotation = editor->annotation(kernelLine);
        QVERIFY2(annotation.contains(QRegularExpression("\\d+ regs · 1\\.0 KB smem · 0 B spill · "
                                                        "≤\\d+ thr")),
                 qPrintable(annotation));
        AssemblyView* assembly = diagnostics.assemblyView();
        QTRY_VERIFY_WITH_TIMEOUT(assembly->shownText().contains(".entry"), kCompileTimeoutMs);
        QVERIFY(assembly->shownText().contains("add_kernel"));
        QVERIFY(assembly->headerText().contains("kernels/add.cu"));
        assembly->setListing(AssemblyView::Listing::Sass);
        const auto full = controller->latestCompiledResult(absolute);
        if (full->sass.available)
            QVERIFY(assembly->shownText().contains("add_kernel"));
        else
            QVERIFY(assembly->shownText().startsWith(AssemblyView::sassUnavailableText()));
        assembly->setListing(AssemblyView::Listing::Ptx);

        // Type a use of an undeclared name into line 10 ("out[i] = tile[...] + b[i];").
        const int brokenLine = 9;
        const QString original = editor->text(brokenLine);
        const int column = original.indexOf("b[i]");
        QVERIFY(column > 0);
        editor->setSelection(brokenLine, column, brokenLine, column + 1);
        editor->replaceSelectedText("not_declared");
        QVERIFY(editor->text(brokenLine).contains("not_declared[i]"));

        ProblemsModel* problems = diagnostics.problemsModel();
        QTRY_VERIFY_WITH_TIMEOUT(problems->errorCount() > 0, kCompileTimeoutMs);
        const QModelIndex row = problems->index(0, 0);
        QCOMPARE(row.data(ProblemsModel::FilePathRole).toString(), absolute);
        QCOMPARE(row.data(ProblemsModel::LineRole).toInt(), brokenLine + 1);
        QCOMPARE(row.data(ProblemsModel::ColumnRole).toInt(), column + 1);
        QVERIFY2(row.data().toString().contains("not_declared"), qPrintable(row.data().toString()));
        QVERIFY(overlay->hasIndicatorAt(overlay->errorIndicator(), brokenLine, column));
        QVERIFY(overlay->hasIndicatorAt(overlay->errorIndicator(), brokenLine, column + 11));
        QVERIFY(!overlay->hasIndicatorAt(overlay->errorIndicator(), brokenLine, column + 12));
        QVERIFY(!overlay->hasIndicatorAt(overlay->errorIndicator(), brokenLine - 1, 4));
        QVERIFY(editor->markersAtLine(brokenLine) & (1 << overlay->errorMarker()));
        QVERIFY(overlay->toolTipAt(brokenLine, column + 3).contains("not_declared"));
        QVERIFY(overlay->toolTipAt(brokenLine, 2).isEmpty()); // no squiggle there
        QVERIFY(overlay->messagesForLine(brokenLine).startsWith("error: "));
        // The error leaves no resources to show, and the PTX view says its listing is old.
        QVERIFY(!overlay->annotatedLines().contains(kernelLine));
        QTRY_VERIFY(assembly->headerText().contains("last compile without errors"));

        // Double-clicking the problem jumps to it.
        ProblemsPane* pane = diagnostics.problemsPane();
        pane->resize(600, 200);
        pane->show();
        editors.jumpTo("model_new.py", 1, 1);
        QCOMPARE(editors.currentFile(), QStringLiteral("model_new.py"));
        QSignalSpy jumped(pane, &ProblemsPane::problemActivated);
        const QRect cell = pane->view()->visualRect(problems->index(0, 0));
        // The view acts on a double-click only on the row its press selected.
        QTest::mouseClick(pane->view()->viewport(), Qt::LeftButton, {}, cell.center());
        QTest::mouseDClick(pane->view()->viewport(), Qt::LeftButton, {}, cell.center());
        QCOMPARE(jumped.count(), 1);
        QCOMPARE(editors.currentFile(), QStringLiteral("kernels/add.cu"));
        int line = -1, index = -1;
        editor->getCursorPosition(&line, &index);
        QCOMPARE(line, brokenLine);
        QCOMPARE(index, column);

        // Fixing it clears the squiggle, the marker and the row; the annotation comes back.
        editor->setSelection(brokenLine, column, brokenLine, column + 12);
        editor->replaceSelectedText("b");
        QCOMPARE(editor->text(brokenLine), original);
        QTRY_COMPARE_WITH_TIMEOUT(problems->rowCount(), 0, kCompileTimeoutMs);
        QVERIFY(!overlay->hasIndicatorAt(overlay->errorIndicator(), brokenLine, column));
        QCOMPARE(editor->markersAtLine(brokenLine) & (1 << overlay->errorMarker()), 0u);
        QTRY_VERIFY_WITH_TIMEOUT(overlay->annotatedLines().contains(kernelLine), kCompileTimeoutMs);
        QTRY_VERIFY(!assembly->headerText().contains("last compile without errors"));
    }

    // Source <-> PTX through NVRTC's line table: the editor's cursor line marks its PTX lines,
    // and a PTX line the reader picks takes the editor to its source line.
    void ptxLinesFollowTheEditorsCursorAndLeadBackToTheSource() {
        QTemporaryDir workspace;
        QVERIFY(workspace.isValid());
        writeFile(workspace.filePath("model_new.py"), "import torch\n");
        writeFile(workspace.filePath("kernels/add.cu"), kGoodKernel);
        QWidget host;
        CandidateEditors editors(Theme::Light, &host);
        kwb::diagnostics::DiagnosticsService::Options options;
        options.debounce = std::chrono::milliseconds(50);
        CandidateDiagnostics diagnostics(&editors, &host, options);
        editors.showCandidate(workspace.path(), false, {});
        editors.jumpTo("kernels/add.cu", 1, 1);
        CodeEditor* editor = editors.editorForFile("kernels/add.cu");
        QVERIFY(editor);
        AssemblyView* assembly = diagnostics.assemblyView();
        // QScintilla reports cursor moves when it updates its view: both must be on screen.
        assembly->show();
        host.resize(900, 600);
        host.show();
        QVERIFY(QTest::qWaitForWindowExposed(&host));
        QTRY_VERIFY_WITH_TIMEOUT(assembly->shownText().contains(".entry"), kCompileTimeoutMs);
        const QStringList ptx = assembly->shownText().split('\n');

        editor->setCursorPosition(9, 4); // source line 10: out[i] = tile[threadIdx.x] + b[i];
        QTRY_VERIFY(!assembly->markedPtxLines().empty());
        bool store = false;
        for (const int line : assembly->markedPtxLines()) {
            QCOMPARE(assembly->sourceLineOfPtxLine(line), 10);
            store = store || ptx.value(line - 1).contains("st.global.f32");
        }
        QVERIFY2(store, "the store of line 10 is among its PTX lines");
        editor->setCursorPosition(2, 0); // a comment: no PTX, no marks
        QTRY_VERIFY(assembly->markedPtxLines().empty());

        int barrier = 0;
        for (int i = 0; i < ptx.size() && !barrier; ++i)
            if (ptx[i].contains("bar.sync"))
                barrier = i + 1;
        QVERIFY(barrier > 0);
        QCOMPARE(assembly->sourceLineOfPtxLine(barrier), 8); // __syncthreads();
        QSignalSpy activated(assembly, &AssemblyView::sourceLineActivated);
        assembly->editor()->setCursorPosition(barrier - 1, 2);
        QTRY_COMPARE(activated.count(), 1);
        QCOMPARE(activated.first().at(0).toInt(), 8);
        int line = 0, column = 0;
        QTRY_VERIFY((editor->getCursorPosition(&line, &column), line == 7));
        QCOMPARE(editors.currentFile(), QStringLiteral("kernels/add.cu"));
        // The SASS listing has no line table: nothing is marked there.
        assembly->setListing(AssemblyView::Listing::Sass);
        editor->setCursorPosition(9, 0);
        QTest::qWait(50);
        QVERIFY(assembly->markedPtxLines().empty());
    }

    // The listing follows the settings' theme (it stayed dark in the light theme).
    void theAssemblyViewTakesTheTheme() {
        AssemblyView view;
        view.applyTheme(Theme::Dark);
        QVERIFY(view.editor()->paper().lightnessF() < 0.5);
        view.applyTheme(Theme::Light);
        QVERIFY(view.editor()->paper().lightnessF() > 0.5);
    }

    void mainWindowShowsTheBundledKernelsResources() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        QCOMPARE(window.findChild<QDockWidget*>("dock.problems")->widget(),
                 static_cast<QWidget*>(window.candidateDiagnostics()->problemsPane()));
        QCOMPARE(window.findChild<QDockWidget*>("dock.assembly")->widget(),
                 static_cast<QWidget*>(window.candidateDiagnostics()->assemblyView()));
        QVERIFY(
            window.openTask(QString::fromStdString(kwb::bundledTasksDirectory()) + "/01_gelu.py"));
        CodeEditor* editor = window.candidateEditors()->editorForFile("kernels/gelu.cu");
        QVERIFY(editor);
        auto* overlay = EditorDiagnosticsOverlay::forEditor(editor);
        // Host code with <<<: the nvcc path, seconds on this machine. Both kernels annotated.
        QTRY_COMPARE_WITH_TIMEOUT(overlay->annotatedLines(), (QList<int>{21, 35}), 180000);
        QVERIFY(editor->annotation(21).contains(" regs · "));
        QCOMPARE(window.candidateDiagnostics()->problemsModel()->errorCount(), 0);
    }

    void diffAgainstSavedComparesDiskWithTheBuffer() {
        QTemporaryDir workspace;
        writeFile(workspace.filePath("model_new.py"), "import torch\nx = 1\n");
        CandidateEditors editors(Theme::Light);
        editors.showCandidate(workspace.path(), false, {});
        QCOMPARE(editors.currentFile(), QStringLiteral("model_new.py"));
        CodeEditor* editor = editors.editorForFile("model_new.py");
        editor->setText("import torch\nx = 2\ny = 3\n");
        editors.diffAgainstSavedAction()->trigger();
        auto* dialog = editors.findChild<QDialog*>();
        QVERIFY(dialog);
        auto* view = dialog->findChild<DiffView*>();
        QVERIFY(view->titleText().contains("model_new.py"));
        QVERIFY2(view->summaryText().contains("+2") && view->summaryText().contains("−1"),
                 qPrintable(view->summaryText()));
        QCOMPARE(view->model()->index(2, DiffModel::TextColumn).data().toString(),
                 QStringLiteral("-x = 1"));
        dialog->close(); // deletes itself
        QTRY_VERIFY(editors.findChild<QDialog*>() == nullptr);
    }

    void reopeningForgetsTheOldFilesResults() {
        QTemporaryDir workspace;
        writeFile(workspace.filePath("kernels/k.cu"), "__global__ void k() { int x = ; }\n");
        QWidget host;
        CandidateEditors editors(Theme::Dark, &host);
        kwb::diagnostics::DiagnosticsService::Options options;
        options.debounce = std::chrono::milliseconds(0);
        CandidateDiagnostics diagnostics(&editors, &host, options);
        editors.showCandidate(workspace.path(), true, {});
        QTRY_VERIFY_WITH_TIMEOUT(diagnostics.problemsModel()->errorCount() > 0, kCompileTimeoutMs);
        editors.showNoCandidate("closed");
        QCOMPARE(diagnostics.problemsModel()->rowCount(), 0);
        QVERIFY(diagnostics.controller()->latestResult(diagnostics.absolutePath("kernels/k.cu")) ==
                nullptr);
        QVERIFY(diagnostics.assemblyView()->shownText().isEmpty());
    }
};

QTEST_MAIN(TestKernelDiagnostics)
#include "test_kernel_diagnostics.moc"
