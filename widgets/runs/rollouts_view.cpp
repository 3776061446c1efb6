#include "widgets/runs/rollouts_view.h"

#include "widgets/rollout/rollout_episode_model.h"
#include "widgets/rollout/rollout_metrics_model.h"
#include "widgets/runs/reward_histogram.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

namespace kwb::ui {

RolloutsView::RolloutsView(RolloutEpisodeModel* episodes, RolloutMetricsModel* metrics,
                           QWidget* parent)
    : QWidget(parent), episodeModel_(episodes) {
    runs_ = new QComboBox(this);
    runs_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    runs_->setMinimumContentsLength(24);
    runs_->setPlaceholderText(tr("No rollout run yet"));
    new_ = new QPushButton(tr("New Rollout…"), this);
    pause_ = new QPushButton(tr("Pause"), this);
    stop_ = new QPushButton(tr("Stop"), this);
    resume_ = new QPushButton(tr("Resume Run"), this);
    refresh_ = new QPushButton(tr("Refresh"), this);
    new_->setToolTip(tr("Run K agent episodes for every task of a task set, N at once, as "
                        "`kwb rollout` does."));
    pause_->setToolTip(tr("Start no new episode, and pause the running ones after their "
                          "current step."));
    stop_->setToolTip(tr("Stop the run: running episodes end as stopped and run again when "
                         "the run is resumed."));
    resume_->setToolTip(tr("Continue a stopped or interrupted run: what is settled is kept, "
                           "the rest runs."));
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Run"), this));
    top->addWidget(runs_, 1);
    for (QPushButton* b : {new_, pause_, stop_, resume_, refresh_})
        top->addWidget(b);

    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    metrics_ = new QTableView(this);
    metrics_->setModel(metrics);
    metrics_->setSelectionMode(QAbstractItemView::NoSelection);
    metrics_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // Eighteen rows scroll rather than set the bottom dock area's (and the window's) height.
    metrics_->setMinimumHeight(60);
    metrics_->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    metrics_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    histogram_ = new RewardHistogram(this);

    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(episodes);
    proxy_->setSortRole(RolloutEpisodeModel::SortRole);
    episodes_ = new QTreeView(this);
    episodes_->setModel(proxy_);
    episodes_->setRootIsDecorated(false);
    episodes_->setUniformRowHeights(true);
    episodes_->setSortingEnabled(true);
    episodes_->sortByColumn(RolloutEpisodeModel::EpisodeColumn, Qt::AscendingOrder);
    episodes_->setSelectionMode(QAbstractItemView::SingleSelection);
    episodes_->setAllColumnsShowFocus(true);
    // Every column as wide as what it holds (a narrow dock scrolls rather than cut task names).
    episodes_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    open_ = new QPushButton(tr("Open Episode"), this);
    open_->setToolTip(tr("Show the episode in the agent, editor, result and rewards panes."));
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(episodes_, 1);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(status_, 1);
    bottom->addWidget(open_);
    rightLayout->addLayout(bottom);

    // Side by side: a bottom dock is wide and short, so nothing here stacks.
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(metrics_);
    split->addWidget(histogram_);
    split->addWidget(right);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setStretchFactor(2, 5);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);

    connect(new_, &QPushButton::clicked, this, &RolloutsView::newRunRequested);
    connect(pause_, &QPushButton::clicked, this, [this] {
        if (paused_)
            emit continueRequested();
        else
            emit pauseRequested();
    });
    connect(stop_, &QPushButton::clicked, this, &RolloutsView::stopRequested);
    connect(resume_, &QPushButton::clicked, this, [this] {
        if (selectedRun() != 0)
            emit resumeRequested(selectedRun());
    });
    connect(refresh_, &QPushButton::clicked, this, &RolloutsView::refreshRequested);
    connect(runs_, &QComboBox::currentIndexChanged, this, [this] {
        updateButtons();
        if (selectedRun() != 0)
            emit runSelected(selectedRun());
    });
    const auto open = [this] {
        if (selectedEpisode() != 0)
            emit openRequested(selectedEpisode());
    };
    connect(open_, &QPushButton::clicked, this, open);
    connect(episodes_, &QTreeView::doubleClicked, this, open);
    connect(episodes_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &RolloutsView::updateButtons);
    updateButtons();
}

void RolloutsView::setRuns(const std::vector<agent::RunRecord>& runs) {
    const qint64 keep = selectedRun();
    QSignalBlocker quiet(runs_);
    runs_->clear();
    statuses_.clear();
    for (const agent::RunRecord& r : runs) {
        statuses_[r.id] = r.status;
        const QString model = QString::fromStdString(r.settings.value("model", ""));
        runs_->addItem(tr("#%1 · %2 · %3 · %4")
                           .arg(r.id)
                           .arg(QString::fromStdString(r.status),
                                QFileInfo(QString::fromStdString(r.taskSet)).fileName(), model),
                       QVariant::fromValue<qint64>(r.id));
    }
    const int at = runs_->findData(QVariant::fromValue<qint64>(keep));
    runs_->setCurrentIndex(at >= 0 ? at : (runs_->count() > 0 ? 0 : -1));
    quiet.unblock();
    updateButtons();
    if (selectedRun() != 0 && selectedRun() != keep)
        emit runSelected(selectedRun());
}

qint64 RolloutsView::selectedRun() const {
    return runs_->currentIndex() < 0 ? 0 : runs_->currentData().value<qint64>();
}

void RolloutsView::selectRun(qint64 run) {
    const int at = runs_->findData(QVariant::fromValue<qint64>(run));
    if (at >= 0)
        runs_->setCurrentIndex(at);
}

void RolloutsView::showRun(const agent::RunSnapshot& snapshot) {
    if (snapshot.run.id != selectedRun())
        return; // an answer for a run no longer selected
    if (!snapshot.error.empty()) {
        summary_->setText(tr("Cannot read run %1: %2")
                              .arg(snapshot.run.id)
                              .arg(QString::fromStdString(snapshot.error)));
        return;
    }
    episodeModel_->setEpisodes(snapshot.episodes);
    if (auto* metrics = qobject_cast<RolloutMetricsModel*>(metrics_->model()))
        metrics->setMetrics(snapshot.metrics);
    histogram_->setCounts(snapshot.metrics.overall.rewardCounts);
    const agent::RunRecord& r = snapshot.run;
    const int perTask = r.settings.value("episodes_per_task", 1);
    int running = 0;
    for (const agent::EpisodeRecord& e : snapshot.episodes)
        running += e.status == agent::EpisodeStatus::Running;
    statuses_[r.id] = r.status;
    summary_->setText(
        tr("%1 · %2 per task · model %3 · profile %4 · %5 scored, %6 running · task set %7")
            .arg(QString::fromStdString(r.status))
            .arg(perTask)
            .arg(QString::fromStdString(r.settings.value("model", "")),
                 QString::fromStdString(r.settings.value("evaluation_profile", "")))
            .arg(snapshot.metrics.overall.scored)
            .arg(running)
            .arg(QString::fromStdString(r.taskSet)));
    updateButtons();
}

void RolloutsView::setExecution(bool running, bool paused) {
    running_ = running;
    paused_ = paused;
    updateButtons();
}

void RolloutsView::setStatusText(const QString& text) {
    status_->setText(text);
}

qint64 RolloutsView::selectedEpisode() const {
    const QModelIndex current = episodes_->currentIndex();
    return current.isValid() ? current.data(RolloutEpisodeModel::EpisodeIdRole).value<qint64>() : 0;
}

void RolloutsView::updateButtons() {
    new_->setEnabled(!running_);
    pause_->setEnabled(running_);
    pause_->setText(paused_ ? tr("Continue") : tr("Pause"));
    stop_->setEnabled(running_);
    // A finished run has nothing left to run; any other one this process is not executing can
    // be continued (a stopped one, or one whose process died: it still reads "running").
    const auto status = statuses_.find(selectedRun());
    resume_->setEnabled(!running_ && status != statuses_.end() && status->second != "finished");
    open_->setEnabled(selectedEpisode() != 0);
}

} // namespace kwb::ui
