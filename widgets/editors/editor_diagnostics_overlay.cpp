#include "widgets/editors/editor_diagnostics_overlay.h"

#include "widgets/editors/code_editor.h"
#include "widgets/models/diagnostic_icons.h"
#include "widgets/models/kernel_resource_text.h"

#include <QEvent>
#include <QHelpEvent>
#include <QToolTip>
#include <Qsci/qscistyle.h>

namespace kwb::ui {
namespace {

constexpr int kSymbolMargin = 1; // CodeEditor uses 0 for line numbers and 2 for folding
constexpr int kMarkerSize = 14;

bool isIdentifierChar(QChar c) {
    return c.isLetterOrNumber() || c == u'_';
}

// [start, end) in characters of `lineText` for a message at 1-based `column`.
std::pair<int, int> tokenRange(const QString& lineText, int column) {
    QString text = lineText;
    while (text.endsWith(u'\n') || text.endsWith(u'\r'))
        text.chop(1);
    if (column <= 0 || column > text.size()) {
        int first = 0;
        while (first < text.size() && text[first].isSpace())
            ++first;
        return {first < text.size() ? first : 0, std::max<int>(1, text.size())};
    }
    const int start = column - 1;
    int end = start + 1;
    if (isIdentifierChar(text[start]))
        while (end < text.size() && isIdentifierChar(text[end]))
            ++end;
    return {start, end};
}

} // namespace

EditorDiagnosticsOverlay* EditorDiagnosticsOverlay::forEditor(CodeEditor* editor) {
    if (auto* existing =
            editor->findChild<EditorDiagnosticsOverlay*>(QString(), Qt::FindDirectChildrenOnly))
        return existing;
    return new EditorDiagnosticsOverlay(editor);
}

EditorDiagnosticsOverlay::EditorDiagnosticsOverlay(CodeEditor* editor)
    : QObject(editor), editor_(editor) {
    errorIndicator_ = editor->indicatorDefine(QsciScintilla::SquigglePixmapIndicator);
    warningIndicator_ = editor->indicatorDefine(QsciScintilla::SquigglePixmapIndicator);
    editor->setIndicatorForegroundColor(severityColor(kwb::Severity::Error), errorIndicator_);
    editor->setIndicatorForegroundColor(severityColor(kwb::Severity::Warning), warningIndicator_);
    errorMarker_ = editor->markerDefine(severityImage(kwb::Severity::Error, kMarkerSize));
    warningMarker_ = editor->markerDefine(severityImage(kwb::Severity::Warning, kMarkerSize));
    noteMarker_ = editor->markerDefine(severityImage(kwb::Severity::Note, kMarkerSize));
    editor->setMarginType(kSymbolMargin, QsciScintilla::SymbolMargin);
    editor->setMarginWidth(kSymbolMargin, kMarkerSize + 4);
    editor->setMarginMarkerMask(kSymbolMargin,
                                (1 << errorMarker_) | (1 << warningMarker_) | (1 << noteMarker_));
    editor->setAnnotationDisplay(QsciScintilla::AnnotationIndented);
    editor->viewport()->installEventFilter(this);
}

EditorDiagnosticsOverlay::~EditorDiagnosticsOverlay() = default;

void EditorDiagnosticsOverlay::clearMarks() {
    const long length = editor_->SendScintilla(QsciScintilla::SCI_GETLENGTH);
    for (int indicator : {errorIndicator_, warningIndicator_}) {
        editor_->SendScintilla(QsciScintilla::SCI_SETINDICATORCURRENT, indicator);
        editor_->SendScintilla(QsciScintilla::SCI_INDICATORCLEARRANGE, 0UL, length);
    }
    for (int marker : {errorMarker_, warningMarker_, noteMarker_})
        editor_->markerDeleteAll(marker);
    marks_.clear();
}

void EditorDiagnosticsOverlay::clear() {
    clearMarks();
    editor_->clearAnnotations();
    annotatedLines_.clear();
}

void EditorDiagnosticsOverlay::setDiagnostics(const std::vector<kwb::Diagnostic>& diagnostics) {
    clearMarks();
    const int lineCount = editor_->lines();
    for (const kwb::Diagnostic& diagnostic : diagnostics) {
        const int line = std::clamp(diagnostic.line > 0 ? diagnostic.line - 1 : 0, 0,
                                    std::max(0, lineCount - 1));
        // A note explains the error above it; only errors and warnings get a squiggle.
        if (diagnostic.severity != kwb::Severity::Note && diagnostic.line > 0) {
            const auto [start, end] = tokenRange(editor_->text(line), diagnostic.column);
            editor_->fillIndicatorRange(
                line, start, line, end,
                diagnostic.severity == kwb::Severity::Error ? errorIndicator_ : warningIndicator_);
        }
        const int marker = diagnostic.severity == kwb::Severity::Error     ? errorMarker_
                           : diagnostic.severity == kwb::Severity::Warning ? warningMarker_
                                                                           : noteMarker_;
        Mark mark;
        mark.markerHandle = editor_->markerAdd(line, marker);
        mark.severity = diagnostic.severity;
        mark.text =
            QStringLiteral("%1: %2").arg(QString::fromStdString(toString(diagnostic.severity)),
                                         QString::fromStdString(diagnostic.message));
        marks_.push_back(std::move(mark));
    }
}

void EditorDiagnosticsOverlay::setKernelResources(
    const std::vector<kwb::diagnostics::ResourceUsage>& kernels) {
    editor_->clearAnnotations();
    annotatedLines_.clear();
    const QString source = editor_->text();
    const QColor paper = editor_->paper();
    const bool dark = paper.lightnessF() < 0.5;
    // One style for the editor's lifetime: each QsciStyle(-1) takes a new style number.
    if (!annotationStyle_)
        annotationStyle_ = std::make_unique<QsciStyle>(-1, QStringLiteral("kernel resources"),
                                                       QColor(), QColor(), editor_->font());
    annotationStyle_->setColor(dark ? QColor("#9aa4b2") : QColor("#5a6270"));
    annotationStyle_->setPaper(dark ? paper.lighter(125) : paper.darker(104));
    QHash<int, QStringList> byLine; // templates instantiated twice share one declaration
    for (const auto& kernel : kernels) {
        const int line = kernelDeclarationLine(source, kernelIdentifier(kernel.name));
        if (line >= 0)
            byLine[line] << QStringLiteral("▸ %1").arg(kernelResourceSummary(kernel));
    }
    for (auto it = byLine.cbegin(); it != byLine.cend(); ++it) {
        editor_->annotate(it.key(), it.value().join(u'\n'), *annotationStyle_);
        annotatedLines_ << it.key();
    }
    std::sort(annotatedLines_.begin(), annotatedLines_.end());
}

bool EditorDiagnosticsOverlay::hasIndicatorAt(int indicator, int line, int index) const {
    const long position = editor_->positionFromLineIndex(line, index);
    return editor_->SendScintilla(QsciScintilla::SCI_INDICATORVALUEAT, indicator, position) != 0;
}

QString EditorDiagnosticsOverlay::messagesForLine(int line) const {
    QStringList messages;
    for (const Mark& mark : marks_)
        if (editor_->markerLine(mark.markerHandle) == line)
            messages << mark.text;
    return messages.join(u'\n');
}

QString EditorDiagnosticsOverlay::toolTipAt(int line, int index) const {
    if (!hasIndicatorAt(errorIndicator_, line, index) &&
        !hasIndicatorAt(warningIndicator_, line, index))
        return {};
    return messagesForLine(line);
}

bool EditorDiagnosticsOverlay::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::ToolTip || marks_.empty())
        return QObject::eventFilter(watched, event);
    auto* help = static_cast<QHelpEvent*>(event);
    int marginsWidth = 0;
    for (int margin = 0; margin < editor_->margins(); ++margin)
        marginsWidth += editor_->marginWidth(margin);
    const long position = editor_->SendScintilla(
        QsciScintilla::SCI_POSITIONFROMPOINT,
        static_cast<unsigned long>(std::max(help->pos().x(), marginsWidth + 1)),
        static_cast<long>(help->pos().y()));
    int line = 0;
    int index = 0;
    editor_->lineIndexFromPosition(static_cast<int>(position), &line, &index);
    const QString text =
        help->pos().x() < marginsWidth ? messagesForLine(line) : toolTipAt(line, index);
    if (text.isEmpty()) {
        QToolTip::hideText();
        event->ignore();
    } else {
        QToolTip::showText(help->globalPos(), text, editor_->viewport());
    }
    return true;
}

} // namespace kwb::ui
