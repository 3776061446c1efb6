#pragma once

#include "engine/diagnostics/diagnostic.h"
#include "engine/diagnostics/resource_usage.h"

#include <QObject>
#include <QString>
#include <memory>
#include <vector>

class QsciStyle;

namespace kwb::ui {

class CodeEditor;

// Draws one file's compile diagnostics into its editor: a squiggle from the reported column to
// the end of that token (the whole line when no column is known), a margin marker per line,
// tooltips with the messages on hover over either, and each kernel's resource usage as an
// annotation under the line that declares it. Scintilla moves indicators and markers with
// edits, so the marks stay on their text until the next result replaces them.
class EditorDiagnosticsOverlay : public QObject {
    Q_OBJECT
public:
    // Attaches to `editor` (as its child) once; later calls return the same overlay.
    static EditorDiagnosticsOverlay* forEditor(CodeEditor* editor);

    // Diagnostics for this file only; line/column 1-based, 0 unknown (drawn on line 1).
    void setDiagnostics(const std::vector<kwb::Diagnostic>& diagnostics);
    // One annotation per kernel found in the editor's text; kernels not found are skipped.
    void setKernelResources(const std::vector<kwb::diagnostics::ResourceUsage>& kernels);
    void clear();

    int errorIndicator() const { return errorIndicator_; }
    int warningIndicator() const { return warningIndicator_; }
    int errorMarker() const { return errorMarker_; }
    int warningMarker() const { return warningMarker_; }
    // Whether `indicator` covers the character at 0-based line/index.
    bool hasIndicatorAt(int indicator, int line, int index) const;
    // The messages for the 0-based line (where its marker is now), one per line; empty if none.
    QString messagesForLine(int line) const;
    // What hovering the text at line/index shows: the line's messages if a squiggle is there.
    QString toolTipAt(int line, int index) const;
    // 0-based lines that carry a kernel annotation.
    QList<int> annotatedLines() const { return annotatedLines_; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    explicit EditorDiagnosticsOverlay(CodeEditor* editor);
    ~EditorDiagnosticsOverlay() override;
    void clearMarks();

    struct Mark {
        int markerHandle = -1;
        kwb::Severity severity = kwb::Severity::Error;
        QString text;
    };

    CodeEditor* editor_;
    int errorIndicator_ = -1;
    int warningIndicator_ = -1;
    int errorMarker_ = -1;
    int warningMarker_ = -1;
    int noteMarker_ = -1;
    std::vector<Mark> marks_;
    QList<int> annotatedLines_;
    std::unique_ptr<QsciStyle> annotationStyle_;
};

} // namespace kwb::ui
