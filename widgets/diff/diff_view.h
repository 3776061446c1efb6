#pragma once

#include <QWidget>

class QCheckBox;
class QDialog;
class QLabel;
class QTreeView;

namespace kwb::ui {

class DiffModel;

// A unified diff between two versions of a file, added and removed lines coloured. The same
// view serves "Diff against saved" (disk vs buffer) and the diff against an earlier agent step
// or evaluation: callers pass the two texts.
class DiffView : public QWidget {
    Q_OBJECT
public:
    explicit DiffView(QWidget* parent = nullptr);

    void showDiff(const QString& title, const QString& before, const QString& after);

    DiffModel* model() const { return model_; }
    QString titleText() const;
    QString summaryText() const;

private:
    void refresh();

    QString before_;
    QString after_;
    QLabel* title_;
    QLabel* summary_;
    QCheckBox* wholeFile_;
    QTreeView* view_;
    DiffModel* model_;
};

// A non-modal dialog holding a DiffView, deleted when closed. Returns it (already shown).
QDialog* showDiffDialog(QWidget* parent, const QString& title, const QString& before,
                        const QString& after);

} // namespace kwb::ui
