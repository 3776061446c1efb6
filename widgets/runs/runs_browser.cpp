#include "widgets/runs/runs_browser.h"

#include "widgets/models/run_list_model.h"
#include "widgets/runs/run_progress_delegate.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTreeView>
#include <QVBoxLayout>

namespace kwb::ui {

RunsBrowser::RunsBrowser(RunListModel* model, QWidget* parent)
    : QWidget(parent), model_(model), proxy_(new QSortFilterProxyModel(this)),
      search_(new QLineEdit(this)), view_(new QTreeView(this)), status_(new QLabel(this)),
      open_(new QPushButton(tr("Open"), this)), replay_(new QPushButton(tr("Replay"), this)),
      aggregate_(new QPushButton(tr("Aggregate"), this)),
      export_(new QPushButton(tr("Export…"), this)) {
    proxy_->setSourceModel(model_);
    proxy_->setFilterRole(RunListModel::SearchTextRole);
    proxy_->setFilterKeyColumn(RunListModel::IdColumn);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy_->setSortRole(Qt::DisplayRole);
    search_->setPlaceholderText(tr("Search episodes: id, task, model, status, provider"));
    search_->setClearButtonEnabled(true);
    connect(search_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);

    view_->setModel(proxy_);
    view_->setRootIsDecorated(false);
    view_->setUniformRowHeights(true);
    view_->setAlternatingRowColors(true);
    view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setItemDelegateForColumn(RunListModel::ProgressColumn, new RunProgressDelegate(view_));
    view_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view_->header()->setStretchLastSection(true);

    open_->setToolTip(tr("Show the episode in the agent and rewards panes (Enter)"));
    replay_->setToolTip(tr("Step through the episode's events in the agent pane"));
    aggregate_->setToolTip(tr("Plot the selected episodes as one rollout: mean reward, pass rate, "
                              "faster than torch.compile, geomean speed-up"));
    export_->setToolTip(tr("Write the selected episodes as JSONL (kwb.episode, version 1)"));
    auto* refresh = new QPushButton(tr("Refresh"), this);

    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {open_, replay_, aggregate_, export_, refresh})
        buttons->addWidget(b);
    buttons->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(search_);
    layout->addWidget(view_, 1);
    layout->addLayout(buttons);
    layout->addWidget(status_);
    status_->setWordWrap(true);

    const auto current = [this] {
        const auto ids = selectedEpisodes();
        return ids.empty() ? qint64(0) : ids.front();
    };
    connect(open_, &QPushButton::clicked, this, [this, current] { emit openRequested(current()); });
    connect(replay_, &QPushButton::clicked, this,
            [this, current] { emit replayRequested(current()); });
    connect(aggregate_, &QPushButton::clicked, this,
            [this] { emit aggregateRequested(selectedEpisodes()); });
    connect(export_, &QPushButton::clicked, this, &RunsBrowser::exportSelection);
    connect(refresh, &QPushButton::clicked, this, &RunsBrowser::refreshRequested);
    connect(view_, &QTreeView::activated, this, [this](const QModelIndex& index) {
        emit openRequested(index.data(RunListModel::EpisodeIdRole).toLongLong());
    });
    connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &RunsBrowser::updateButtons);
    updateButtons();
}

void RunsBrowser::setStatusText(const QString& text) {
    status_->setText(text);
}

void RunsBrowser::setSearchText(const QString& text) {
    search_->setText(text);
}

std::vector<qint64> RunsBrowser::selectedEpisodes() const {
    std::vector<qint64> ids;
    for (const QModelIndex& index : view_->selectionModel()->selectedRows())
        ids.push_back(index.data(RunListModel::EpisodeIdRole).toLongLong());
    return ids;
}

void RunsBrowser::selectEpisode(qint64 id) {
    const int row = model_->rowOf(id);
    if (row < 0)
        return;
    const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
    view_->selectionModel()->select(index, QItemSelectionModel::ClearAndSelect |
                                               QItemSelectionModel::Rows);
    view_->scrollTo(index);
}

void RunsBrowser::updateButtons() {
    const std::size_t n = selectedEpisodes().size();
    open_->setEnabled(n == 1);
    replay_->setEnabled(n == 1);
    aggregate_->setEnabled(n >= 1);
    export_->setEnabled(n >= 1);
}

void RunsBrowser::exportSelection() {
    const auto ids = selectedEpisodes();
    if (ids.empty())
        return;
    const QString file = QFileDialog::getSaveFileName(
        this, tr("Export episodes"), QStringLiteral("episodes.jsonl"), tr("JSON Lines (*.jsonl)"));
    if (!file.isEmpty())
        emit exportRequested(ids, file);
}

} // namespace kwb::ui
