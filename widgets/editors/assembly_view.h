#pragma once

#include "engine/diagnostics/kernel_check.h"
#include "engine/diagnostics/ptx_line_map.h"
#include "widgets/core/app_settings.h"

#include <QWidget>
#include <memory>
#include <vector>

class QLabel;
class QToolButton;

namespace kwb::ui {

class CodeEditor;

// The PTX or SASS of the current .cu file, read-only, next to the editors: what the compiler
// made of the source. Shows the newest full compile; while the file has errors it keeps the
// last good listing and says so. In the PTX listing, the lines of the source line under the
// editor's cursor are marked, and a PTX line the reader selects names its source line.
class AssemblyView : public QWidget {
    Q_OBJECT
public:
    enum class Listing { Ptx, Sass };

    explicit AssemblyView(QWidget* parent = nullptr);

    // `compiled` (a full compile without errors) may be null: none yet; `stale` marks a listing
    // older than the file's newest check (the file has errors now).
    void showResult(const QString& displayName,
                    std::shared_ptr<const kwb::diagnostics::KernelCheckResult> compiled,
                    bool stale);
    void showNothing(const QString& why);
    void setListing(Listing listing);
    Listing listing() const { return listing_; }

    QString shownText() const;
    QString headerText() const;

    // Source <-> PTX (the PTX listing's line table, from NVRTC's -lineinfo): marks the PTX lines
    // of the shown file's 1-based `line` and scrolls to the first; 0 clears the marks.
    void showSourceLine(int line);
    // The 1-based PTX lines marked now.
    const std::vector<int>& markedPtxLines() const { return marked_; }
    // The source line of a 1-based PTX line of the shown file (0: none, or another file's).
    int sourceLineOfPtxLine(int ptxLine) const;
    CodeEditor* editor() const { return editor_; }

    static QString sassUnavailableText();
    // The listing's colours, and the marks' (the settings' theme changed).
    void applyTheme(Theme theme);

signals:
    // The reader put the cursor on a PTX line that comes from `line` of the shown file.
    void sourceLineActivated(int line);

private:
    void refresh();
    void onCursorMoved(int line);

    Listing listing_ = Listing::Ptx;
    QString displayName_;
    QString emptyReason_;
    std::shared_ptr<const kwb::diagnostics::KernelCheckResult> result_;
    bool stale_ = false;
    kwb::diagnostics::PtxLineMap lineMap_; // of result_'s PTX
    std::vector<int> marked_;
    int markedSourceLine_ = 0;
    int ptxMarker_ = -1;
    bool replacingText_ = false; // cursor moves while the listing is replaced are not the reader's
    QLabel* header_;
    QToolButton* ptxButton_;
    QToolButton* sassButton_;
    CodeEditor* editor_;
};

} // namespace kwb::ui
