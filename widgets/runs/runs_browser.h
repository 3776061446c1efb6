#pragma once

#include <QWidget>
#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTreeView;

namespace kwb::ui {

class RunListModel;

// Browses the trajectory store: search, open, replay, aggregate a selection as a rollout, and
// export to JSONL. It only emits requests; the owner reads and writes the store off the UI
// thread.
class RunsBrowser : public QWidget {
    Q_OBJECT
public:
    explicit RunsBrowser(RunListModel* model, QWidget* parent = nullptr);

    void setStatusText(const QString& text);
    void setSearchText(const QString& text);
    QSortFilterProxyModel* proxy() const { return proxy_; }
    QTreeView* view() const { return view_; }
    std::vector<qint64> selectedEpisodes() const;
    void selectEpisode(qint64 id);

signals:
    void openRequested(qint64 episodeId);
    void replayRequested(qint64 episodeId);
    void aggregateRequested(const std::vector<qint64>& episodeIds);
    void exportRequested(const std::vector<qint64>& episodeIds, const QString& file);
    void refreshRequested();

private:
    void exportSelection();
    void updateButtons();

    RunListModel* model_;
    QSortFilterProxyModel* proxy_;
    QLineEdit* search_;
    QTreeView* view_;
    QLabel* status_;
    QPushButton* open_;
    QPushButton* replay_;
    QPushButton* aggregate_;
    QPushButton* export_;
};

} // namespace kwb::ui
