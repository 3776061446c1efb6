#include "widgets/editors/code_editor.h"

#include "widgets/core/workbench_fonts.h"
#include "widgets/editors/cuda_lexer.h"

#include <QFileInfo>
#include <Qsci/qscilexercpp.h>
#include <Qsci/qscilexerpython.h>

namespace kwb::ui {
namespace {

struct EditorColors {
    QColor background, text, lineNumbers, margin, caretLine, selection;
    QColor keyword, cudaKeyword, comment, string, number, preprocessor, definition, decorator;
};

EditorColors colorsFor(Theme theme) {
    if (theme == Theme::Dark)
        return {"#1e1f22", "#d4d4d4", "#6b6f76", "#25262a", "#2a2c31", "#264f78", "#569cd6",
                "#4ec9b0", "#6a9955", "#ce9178", "#b5cea8", "#c586c0", "#dcdcaa", "#d7ba7d"};
    return {"#ffffff", "#1f1f1f", "#8a8a8a", "#f3f3f3", "#f5f7fb", "#add6ff", "#0000c0",
            "#00808a", "#3c7a3c", "#a31515", "#098658", "#8b008b", "#795e26", "#7a5c00"};
}

void styleLexer(QsciLexer* lexer, const EditorColors& c, const QFont& font) {
    lexer->setDefaultFont(font);
    lexer->setFont(font, -1);
    lexer->setDefaultPaper(c.background);
    lexer->setPaper(c.background, -1);
    lexer->setDefaultColor(c.text);
    lexer->setColor(c.text, -1);
    if (auto* cpp = qobject_cast<QsciLexerCPP*>(lexer)) {
        cpp->setColor(c.keyword, QsciLexerCPP::Keyword);
        cpp->setColor(c.cudaKeyword, QsciLexerCPP::KeywordSet2);
        for (int style : {QsciLexerCPP::Comment, QsciLexerCPP::CommentLine,
                          QsciLexerCPP::CommentDoc, QsciLexerCPP::CommentLineDoc})
            cpp->setColor(c.comment, style);
        for (int style : {QsciLexerCPP::DoubleQuotedString, QsciLexerCPP::SingleQuotedString,
                          QsciLexerCPP::RawString})
            cpp->setColor(c.string, style);
        cpp->setColor(c.number, QsciLexerCPP::Number);
        cpp->setColor(c.preprocessor, QsciLexerCPP::PreProcessor);
        cpp->setColor(c.text, QsciLexerCPP::Operator);
        cpp->setColor(c.text, QsciLexerCPP::Identifier);
    } else if (auto* py = qobject_cast<QsciLexerPython*>(lexer)) {
        py->setColor(c.keyword, QsciLexerPython::Keyword);
        py->setColor(c.comment, QsciLexerPython::Comment);
        py->setColor(c.comment, QsciLexerPython::CommentBlock);
        for (int style :
             {QsciLexerPython::DoubleQuotedString, QsciLexerPython::SingleQuotedString,
              QsciLexerPython::TripleSingleQuotedString, QsciLexerPython::TripleDoubleQuotedString,
              QsciLexerPython::DoubleQuotedFString, QsciLexerPython::SingleQuotedFString})
            py->setColor(c.string, style);
        py->setColor(c.number, QsciLexerPython::Number);
        py->setColor(c.definition, QsciLexerPython::FunctionMethodName);
        py->setColor(c.cudaKeyword, QsciLexerPython::ClassName);
        py->setColor(c.decorator, QsciLexerPython::Decorator);
        py->setColor(c.text, QsciLexerPython::Operator);
        py->setColor(c.text, QsciLexerPython::Identifier);
    }
}

} // namespace

SourceLanguage languageForFile(const QString& fileName) {
    const QString suffix = QFileInfo(fileName).suffix().toLower();
    if (suffix == QLatin1String("py"))
        return SourceLanguage::Python;
    if (suffix == QLatin1String("cu") || suffix == QLatin1String("cuh"))
        return SourceLanguage::Cuda;
    if (suffix == QLatin1String("cpp") || suffix == QLatin1String("cc") ||
        suffix == QLatin1String("h") || suffix == QLatin1String("hpp"))
        return SourceLanguage::Cpp;
    return SourceLanguage::PlainText;
}

CodeEditor::CodeEditor(SourceLanguage language, Theme theme, QWidget* parent)
    : QsciScintilla(parent), language_(language) {
    switch (language) {
    case SourceLanguage::Python:
        setLexer(new QsciLexerPython(this));
        break;
    case SourceLanguage::Cuda:
        setLexer(new CudaLexer(this));
        break;
    case SourceLanguage::Cpp:
        setLexer(new QsciLexerCPP(this));
        break;
    case SourceLanguage::PlainText:
        break;
    }
    setUtf8(true);
    setIndentationsUseTabs(false);
    setTabWidth(4);
    setIndentationWidth(4);
    setAutoIndent(true);
    setBraceMatching(QsciScintilla::SloppyBraceMatch);
    setCaretLineVisible(true);
    setFolding(QsciScintilla::BoxedTreeFoldStyle, 2);
    setMarginType(0, QsciScintilla::NumberMargin);
    setMarginLineNumbers(0, true);
    setEdgeMode(QsciScintilla::EdgeLine);
    setEdgeColumn(100);
    connect(this, &QsciScintilla::linesChanged, this, &CodeEditor::updateMarginWidth);
    applyTheme(theme);
}

void CodeEditor::applyTheme(Theme theme) {
    const EditorColors c = colorsFor(theme);
    const QFont font = codeFont(10);
    if (QsciLexer* current = lexer())
        styleLexer(current, c, font);
    else
        setFont(font);
    setPaper(c.background);
    setColor(c.text);
    setMarginsFont(font);
    setMarginsBackgroundColor(c.margin);
    setMarginsForegroundColor(c.lineNumbers);
    setFoldMarginColors(c.margin, c.margin);
    setCaretLineBackgroundColor(c.caretLine);
    setCaretForegroundColor(c.text);
    setSelectionBackgroundColor(c.selection);
    setEdgeColor(c.margin.darker(theme == Theme::Dark ? 60 : 110));
    updateMarginWidth();
}

void CodeEditor::setSource(const QString& text) {
    setText(text);
    SendScintilla(SCI_EMPTYUNDOBUFFER);
    setModified(false);
    updateMarginWidth();
}

void CodeEditor::updateMarginWidth() {
    setMarginWidth(0, QStringLiteral("00%1").arg(lines()));
}

} // namespace kwb::ui
