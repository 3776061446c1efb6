#pragma once

#include "agent/store/episode_snapshot.h"

#include <QWidget>
#include <vector>

class QLabel;
class QStackedWidget;
class QTableWidget;

namespace kwb::ui {

class RewardPlot;

// Reward traces. One episode: reward and the speed-ups vs eager and vs torch.compile per
// evaluation. Several episodes (a user selection: the store keeps no rollout-run record): mean
// reward, pass rate, faster-than-compile share and geomean speed-up per evaluation step, and a
// table per task level. Clicking a point of an episode emits stepSelected.
class RewardsPane : public QWidget {
    Q_OBJECT
public:
    explicit RewardsPane(QWidget* parent = nullptr);

    void showEpisode(agent::EpisodeSnapshotPtr episode);
    void showRollout(const std::vector<agent::EpisodeSnapshotPtr>& episodes);
    void clear();

    agent::EpisodeSnapshotPtr episode() const { return episode_; }
    RewardPlot* rewardPlot() const { return reward_; }
    RewardPlot* speedupPlot() const { return speedup_; }
    RewardPlot* meanRewardPlot() const { return meanReward_; }
    RewardPlot* ratesPlot() const { return rates_; }
    RewardPlot* geomeanPlot() const { return geomean_; }
    QTableWidget* levelTable() const { return levels_; }
    QString headline() const;

signals:
    void stepSelected(qint64 episodeId, qint64 stepIndex);

private:
    QLabel* header_;
    QStackedWidget* pages_;
    RewardPlot* reward_;
    RewardPlot* speedup_;
    RewardPlot* meanReward_;
    RewardPlot* rates_;
    RewardPlot* geomean_;
    QTableWidget* levels_;
    agent::EpisodeSnapshotPtr episode_;
};

} // namespace kwb::ui
