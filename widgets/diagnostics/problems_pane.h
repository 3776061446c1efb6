#pragma once

#include <QWidget>

class QLabel;
class QTreeView;

namespace kwb::ui {

class ProblemsModel;

// The problems list: every compile message of the open kernel files. Double-click (or Enter)
// asks to jump to the message's file, line and column.
class ProblemsPane : public QWidget {
    Q_OBJECT
public:
    explicit ProblemsPane(ProblemsModel* model, QWidget* parent = nullptr);

    QTreeView* view() const { return view_; }
    // Where the compile is at: "checking kernels/gelu.cu…", "NVRTC · 412 ms", …
    void setStatusText(const QString& text);

signals:
    void problemActivated(const QString& file, int line, int column);

private:
    void updateSummary(int errors, int warnings);

    ProblemsModel* model_;
    QLabel* summary_;
    QLabel* status_;
    QTreeView* view_;
};

} // namespace kwb::ui
