#include "widgets/runs/rewards_pane.h"

#include "agent/store/edit_history.h"
#include "widgets/models/reward_series.h"
#include "widgets/runs/reward_plot.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>

namespace kwb::ui {
namespace {

const QColor kReward(0x2f, 0xa5, 0x5a);
const QColor kEager(0x3b, 0x82, 0xd6);
const QColor kCompile(0xd9, 0x7a, 0x1e);
const QColor kPass(0x8a, 0x6f, 0xd1);

QString speedup(double value) {
    return value > 0 ? QStringLiteral("%1x").arg(value, 0, 'f', 2) : QStringLiteral("n/a");
}

QString percent(double fraction) {
    return QStringLiteral("%1%").arg(100.0 * fraction, 0, 'f', 0);
}

RewardPlot* makePlot(const QString& title, const QString& y, const QString& empty) {
    auto* plot = new RewardPlot;
    plot->setTitle(title);
    plot->setAxisLabels(QObject::tr("evaluation step"), y);
    plot->setEmptyText(empty);
    return plot;
}

QString aggregateLabel(const RolloutAggregate& a) {
    return QObject::tr("%1 evaluation(s)<br>mean reward %2<br>pass rate %3<br>faster than "
                       "compile %4<br>geomean speed-up vs eager %5")
        .arg(a.evaluations)
        .arg(a.meanReward, 0, 'f', 2)
        .arg(percent(a.passRate), percent(a.fasterThanCompileRate),
             a.geomeanSpeedupVsEager ? speedup(*a.geomeanSpeedupVsEager) : QStringLiteral("n/a"));
}

} // namespace

RewardsPane::RewardsPane(QWidget* parent)
    : QWidget(parent), header_(new QLabel(this)), pages_(new QStackedWidget(this)) {
    const QString noEvaluations =
        tr("No evaluations yet. Milestone rewards and speed-ups appear here, one point per "
           "Verify, Profile or final evaluation of the episode shown in the agent pane.");
    reward_ = makePlot(tr("Reward per evaluation"), tr("reward"), noEvaluations);
    reward_->setMinimumYRange(AxisRange{-1, 3});
    speedup_ = makePlot(tr("Speed-up per evaluation"), tr("speed-up (x)"), noEvaluations);
    speedup_->setReferenceLine(1.0);
    const QString noSelection =
        tr("Select several episodes in the Runs browser and choose Aggregate to see them as a "
           "rollout.");
    meanReward_ = makePlot(tr("Mean reward per step"), tr("reward"), noSelection);
    meanReward_->setMinimumYRange(AxisRange{-1, 3});
    rates_ = makePlot(tr("Pass rate and faster than torch.compile"), tr("% of evaluations"),
                      noSelection);
    rates_->setMinimumYRange(AxisRange{0, 100});
    geomean_ = makePlot(tr("Geomean speed-up vs eager (passes)"), tr("speed-up (x)"), noSelection);
    geomean_->setReferenceLine(1.0);
    levels_ = new QTableWidget(0, 6, this);
    levels_->setHorizontalHeaderLabels({tr("Level"), tr("Episodes"), tr("Mean reward"),
                                        tr("Pass rate"), tr("Faster than compile"),
                                        tr("Geomean vs eager")});
    levels_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    levels_->verticalHeader()->hide();
    levels_->setEditTriggers(QAbstractItemView::NoEditTriggers);

    auto* episodePage = new QSplitter(Qt::Horizontal);
    episodePage->addWidget(reward_);
    episodePage->addWidget(speedup_);
    auto* rolloutPage = new QSplitter(Qt::Horizontal);
    rolloutPage->addWidget(meanReward_);
    rolloutPage->addWidget(rates_);
    rolloutPage->addWidget(geomean_);
    rolloutPage->addWidget(levels_);
    pages_->addWidget(episodePage);
    pages_->addWidget(rolloutPage);

    header_->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(header_);
    layout->addWidget(pages_, 1);
    for (RewardPlot* plot : {reward_, speedup_})
        connect(plot, &RewardPlot::stepSelected, this, &RewardsPane::stepSelected);
    clear();
}

QString RewardsPane::headline() const {
    return header_->text();
}

void RewardsPane::clear() {
    episode_.reset();
    for (RewardPlot* plot : {reward_, speedup_, meanReward_, rates_, geomean_})
        plot->setSeries({});
    levels_->setRowCount(0);
    header_->setText(tr("No episode shown. Open one in the Runs browser or start an agent."));
    pages_->setCurrentIndex(0);
}

void RewardsPane::showEpisode(agent::EpisodeSnapshotPtr episode) {
    episode_ = std::move(episode);
    pages_->setCurrentIndex(0);
    if (!episode_) {
        clear();
        return;
    }
    PlotSeries reward{tr("reward"), kReward, {}};
    PlotSeries eager{tr("vs eager"), kEager, {}};
    PlotSeries compile{tr("vs torch.compile"), kCompile, {}};
    for (const EvaluationPoint& p : evaluationPoints(*episode_)) {
        const QString where = tr("evaluation %1 (%2), step %3")
                                  .arg(p.index)
                                  .arg(QString::fromStdString(p.trigger))
                                  .arg(p.sequence);
        const QString values = tr("%1<br>reward %2, %3 vs eager, %4 vs torch.compile<br>%5")
                                   .arg(where)
                                   .arg(p.reward)
                                   .arg(speedup(p.speedupVsEager), speedup(p.speedupVsCompile),
                                        QString::fromStdString(p.verdict).toHtmlEscaped());
        reward.points.push_back({double(p.index), p.reward, p.episode, p.sequence, values});
        // An unmeasured speed-up is absent, not a zero that would read as a regression; a
        // rejected candidate's timing (wrong, or caught by a strict flag: reward below 1) is no
        // speed-up at all (the reward point shows it).
        if (p.reward < 1)
            continue;
        if (p.speedupVsEager > 0)
            eager.points.push_back(
                {double(p.index), p.speedupVsEager, p.episode, p.sequence, values});
        if (p.speedupVsCompile > 0)
            compile.points.push_back(
                {double(p.index), p.speedupVsCompile, p.episode, p.sequence, values});
    }
    reward_->setSeries({reward});
    speedup_->setSeries({eager, compile});
    const auto& r = episode_->record;
    if (r.provider == agent::kEditHistoryProvider) {
        const QString workspace = QString::fromStdString(r.settings.value("workspace", ""));
        header_->setText(
            reward.points.empty()
                ? tr("Hand edits of %1: no evaluations yet. Ctrl+S (with Verify on Save) or F5 "
                     "evaluates the workspace, and each result is kept and plotted here.")
                      .arg(workspace)
                : tr("Hand edits of %1 · %n evaluation(s). Click a point for its files and "
                     "result.",
                     nullptr, static_cast<int>(reward.points.size()))
                      .arg(workspace));
        return;
    }
    header_->setText(
        tr("Episode %1 · %2 · %3 · %n evaluation(s)", nullptr,
           static_cast<int>(reward.points.size()))
            .arg(r.id)
            .arg(QString::fromStdString(r.model),
                 QString::fromStdString(std::string(agent::episodeStatusName(r.status)))));
}

void RewardsPane::showRollout(const std::vector<agent::EpisodeSnapshotPtr>& episodes) {
    episode_.reset();
    pages_->setCurrentIndex(1);
    const RolloutMetrics metrics = rolloutMetrics(episodes);
    PlotSeries mean{tr("mean reward"), kReward, {}};
    PlotSeries pass{tr("pass rate"), kPass, {}};
    PlotSeries faster{tr("faster than compile"), kCompile, {}};
    PlotSeries geomean{tr("geomean vs eager"), kEager, {}};
    for (const RolloutAggregate& a : metrics.perStep) {
        const double x = QString::fromStdString(a.label).toDouble();
        const QString label = tr("step %1<br>").arg(x) + aggregateLabel(a);
        mean.points.push_back({x, a.meanReward, 0, 0, label});
        pass.points.push_back({x, 100.0 * a.passRate, 0, 0, label});
        faster.points.push_back({x, 100.0 * a.fasterThanCompileRate, 0, 0, label});
        if (a.geomeanSpeedupVsEager)
            geomean.points.push_back({x, *a.geomeanSpeedupVsEager, 0, 0, label});
    }
    meanReward_->setSeries({mean});
    rates_->setSeries({pass, faster});
    geomean_->setSeries({geomean});
    levels_->setRowCount(static_cast<int>(metrics.perLevel.size()));
    for (int row = 0; row < levels_->rowCount(); ++row) {
        const RolloutAggregate& a = metrics.perLevel[static_cast<std::size_t>(row)];
        const QStringList cells = {QString::fromStdString(a.label),
                                   QString::number(a.evaluations),
                                   QString::number(a.meanReward, 'f', 2),
                                   percent(a.passRate),
                                   percent(a.fasterThanCompileRate),
                                   a.geomeanSpeedupVsEager ? speedup(*a.geomeanSpeedupVsEager)
                                                           : QStringLiteral("n/a")};
        for (int column = 0; column < cells.size(); ++column)
            levels_->setItem(row, column, new QTableWidgetItem(cells[column]));
    }
    header_->setText(tr("Aggregate over %n selected episode(s). The store keeps no rollout-run "
                        "record, so a rollout here is the episodes you selected; per level uses "
                        "each episode's last evaluation.",
                        nullptr, metrics.episodes));
}

} // namespace kwb::ui
