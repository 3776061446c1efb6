#include "widgets/editors/assembly_view.h"

#include "widgets/editors/code_editor.h"

#include <QApplication>
#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QPalette>
#include <QToolButton>
#include <QVBoxLayout>

namespace kwb::ui {
namespace {

Theme currentTheme() {
    return QApplication::palette().color(QPalette::Window).lightnessF() < 0.5 ? Theme::Dark
                                                                              : Theme::Light;
}

} // namespace

AssemblyView::AssemblyView(QWidget* parent)
    : QWidget(parent), header_(new QLabel(this)), ptxButton_(new QToolButton(this)),
      sassButton_(new QToolButton(this)),
      editor_(new CodeEditor(SourceLanguage::PlainText, currentTheme(), this)) {
    editor_->setReadOnly(true);
    editor_->setObjectName(QStringLiteral("assemblyEditor"));
    header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    header_->setForegroundRole(QPalette::PlaceholderText);
    ptxButton_->setText(QStringLiteral("PTX"));
    sassButton_->setText(QStringLiteral("SASS"));
    auto* group = new QButtonGroup(this);
    for (QToolButton* button : {ptxButton_, sassButton_}) {
        button->setCheckable(true);
        button->setAutoRaise(true);
        group->addButton(button);
    }
    ptxButton_->setChecked(true);
    ptxButton_->setToolTip(tr("PTX of the current .cu file"));
    sassButton_->setToolTip(tr("SASS of the current .cu file (needs cuobjdump or nvdisasm)"));
    connect(ptxButton_, &QToolButton::clicked, this, [this] { setListing(Listing::Ptx); });
    connect(sassButton_, &QToolButton::clicked, this, [this] { setListing(Listing::Sass); });

    auto* top = new QHBoxLayout;
    top->setContentsMargins(6, 2, 6, 2);
    top->addWidget(ptxButton_);
    top->addWidget(sassButton_);
    top->addSpacing(8);
    top->addWidget(header_, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(top);
    layout->addWidget(editor_, 1);
    ptxMarker_ = editor_->markerDefine(QsciScintilla::Background);
    applyTheme(currentTheme());
    connect(editor_, &QsciScintilla::cursorPositionChanged, this,
            [this](int line, int) { onCursorMoved(line + 1); });
    showNothing(tr("PTX and SASS appear here for the current .cu file."));
}

void AssemblyView::applyTheme(Theme theme) {
    editor_->applyTheme(theme);
    // The marks are a quiet tint of the selection colour: the code stays readable through it.
    editor_->setMarkerBackgroundColor(
        theme == Theme::Dark ? QColor(0x26, 0x4f, 0x78) : QColor(0xd6, 0xe8, 0xfa), ptxMarker_);
}

void AssemblyView::onCursorMoved(int ptxLine) {
    // Only the reader's moves: replacing the text puts the cursor at the start.
    if (replacingText_)
        return;
    if (const int line = sourceLineOfPtxLine(ptxLine); line > 0)
        emit sourceLineActivated(line);
}

int AssemblyView::sourceLineOfPtxLine(int ptxLine) const {
    if (listing_ != Listing::Ptx || !result_)
        return 0;
    const auto place = lineMap_.sourceOf(ptxLine);
    if (!place || lineMap_.ptxLinesOf(displayName_.toStdString(), place->line).empty())
        return 0; // another file's line (a header's code inlined here)
    return place->line;
}

void AssemblyView::showSourceLine(int line) {
    markedSourceLine_ = line;
    editor_->markerDeleteAll(ptxMarker_);
    marked_.clear();
    if (listing_ != Listing::Ptx || !result_ || line <= 0)
        return;
    marked_ = lineMap_.ptxLinesOf(displayName_.toStdString(), line);
    for (const int ptxLine : marked_)
        editor_->markerAdd(ptxLine - 1, ptxMarker_);
    if (!marked_.empty()) {
        // Bring the first into view unless all of them are already in it.
        const int first = marked_.front() - 1, last = marked_.back() - 1;
        const int top = editor_->firstVisibleLine();
        const int shown = editor_->SendScintilla(QsciScintilla::SCI_LINESONSCREEN);
        if (first < top || last >= top + shown)
            editor_->setFirstVisibleLine(std::max(0, first - 3));
    }
}

QString AssemblyView::sassUnavailableText() {
    return tr("SASS needs cuobjdump or nvdisasm (CUDA toolkit)");
}

void AssemblyView::showResult(const QString& displayName,
                              std::shared_ptr<const kwb::diagnostics::KernelCheckResult> result,
                              bool stale) {
    displayName_ = displayName;
    if (result != result_)
        lineMap_ = result ? kwb::diagnostics::PtxLineMap::fromPtx(result->ptx)
                          : kwb::diagnostics::PtxLineMap{};
    result_ = std::move(result);
    stale_ = stale;
    emptyReason_ =
        result_ ? QString()
                : tr("%1: no PTX yet (waiting for a compile without errors)").arg(displayName);
    refresh();
}

void AssemblyView::showNothing(const QString& why) {
    displayName_.clear();
    result_.reset();
    lineMap_ = {};
    stale_ = false;
    emptyReason_ = why;
    refresh();
}

void AssemblyView::setListing(Listing listing) {
    listing_ = listing;
    ptxButton_->setChecked(listing == Listing::Ptx);
    sassButton_->setChecked(listing == Listing::Sass);
    refresh();
}

QString AssemblyView::shownText() const {
    return editor_->text();
}

QString AssemblyView::headerText() const {
    return header_->text();
}

void AssemblyView::refresh() {
    if (!result_) {
        header_->setText(emptyReason_);
        replacingText_ = true;
        editor_->setSource(QString());
        replacingText_ = false;
        showSourceLine(0);
        return;
    }
    const auto& r = *result_;
    QString header = QStringLiteral("%1 · %2 · %3 · %4 ms")
                         .arg(displayName_, QString::fromStdString(r.arch),
                              QString::fromStdString(toString(r.compilePath)))
                         .arg(r.compileMs, 0, 'f', 0);
    if (stale_)
        header += tr(" · from the last compile without errors");
    QString text;
    if (listing_ == Listing::Ptx) {
        text = r.ptx.empty() ? tr("// no PTX: %1").arg(QString::fromStdString(r.pathReason))
                             : QString::fromStdString(r.ptx);
    } else if (r.sass.available) {
        header += QStringLiteral(" · %1").arg(QString::fromStdString(r.sass.tool));
        text = QString::fromStdString(r.sass.text);
    } else {
        text = sassUnavailableText();
        if (!r.sass.error.empty())
            text += QStringLiteral("\n\n") + QString::fromStdString(r.sass.error);
    }
    header_->setText(header);
    header_->setToolTip(QString::fromStdString(r.pathReason));
    // Keep the reader's place when only a newer compile of the same listing arrives.
    const int firstLine = editor_->firstVisibleLine();
    replacingText_ = true;
    editor_->setSource(text);
    editor_->setFirstVisibleLine(firstLine);
    replacingText_ = false;
    showSourceLine(markedSourceLine_); // the marks follow a newer compile of the same line
}

} // namespace kwb::ui
