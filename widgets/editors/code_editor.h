#pragma once

#include "widgets/core/app_settings.h"

#include <Qsci/qsciscintilla.h>

namespace kwb::ui {

enum class SourceLanguage { Python, Cuda, Cpp, PlainText };

// Picks the language from the file name: .py -> Python, .cu/.cuh -> CUDA, .cpp/.h -> C++.
SourceLanguage languageForFile(const QString& fileName);

// A QScintilla editor set up the way every pane of the workbench wants it: monospace font,
// line numbers, folding, the theme's colours and the right lexer.
class CodeEditor : public QsciScintilla {
    Q_OBJECT
public:
    CodeEditor(SourceLanguage language, Theme theme, QWidget* parent = nullptr);

    SourceLanguage language() const { return language_; }
    void applyTheme(Theme theme);
    void setSource(const QString& text); // replaces the text and resets the undo history

private:
    void updateMarginWidth();

    SourceLanguage language_;
};

} // namespace kwb::ui
