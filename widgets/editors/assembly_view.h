#pragma once

#include "engine/diagnostics/kernel_check.h"

#include <QWidget>
#include <memory>

class QLabel;
class QToolButton;

namespace kwb::ui {

class CodeEditor;

// The PTX or SASS of the current .cu file, read-only, next to the editors: what the compiler
// made of the source. Shows the newest full compile; while the file has errors it keeps the
// last good listing and says so.
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
    CodeEditor* editor() const { return editor_; }

    static QString sassUnavailableText();

private:
    void refresh();

    Listing listing_ = Listing::Ptx;
    QString displayName_;
    QString emptyReason_;
    std::shared_ptr<const kwb::diagnostics::KernelCheckResult> result_;
    bool stale_ = false;
    QLabel* header_;
    QToolButton* ptxButton_;
    QToolButton* sassButton_;
    CodeEditor* editor_;
};

} // namespace kwb::ui
