#pragma once

#include "agent/store/episode_snapshot.h"
#include "agent/store/store_reader.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <vector>

namespace kwb::ui {

class AgentPane;
class AgentSessionController;
class EngineBridge;
class RewardsPane;
class RunListModel;
class RunsBrowser;

// The agent's three panes over one trajectory store and how they link: the runs browser opens,
// replays and aggregates episodes read by the engine bridge; the agent pane shows the live or
// opened episode; the rewards pane follows it; a click on a reward point selects that step in
// the conversation, and a selected step highlights nothing else yet (no other pane knows steps).
class AgentPanes : public QObject {
    Q_OBJECT
public:
    AgentPanes(EngineBridge& bridge, const QString& storePath, QWidget* parentWidget);
    ~AgentPanes() override;

    AgentPane* agentPane() const;
    RewardsPane* rewardsPane() const;
    RunsBrowser* runsBrowser() const;
    RunListModel* runListModel() const { return runModel_; }
    AgentSessionController* controller() const { return controller_; }
    const QString& storePath() const { return storePath_; }

    void refreshRuns();
    void openEpisode(qint64 id);
    void replayEpisode(qint64 id);
    void aggregateEpisodes(const std::vector<qint64>& ids);
    bool hasEpisodeList() const { return listed_; }

signals:
    void episodeListShown();
    void logMessage(const QString& text, bool problem);

private:
    void onEpisodes(std::shared_ptr<const agent::EpisodeSetSnapshot> set, const QString& purpose);

    EngineBridge& bridge_;
    QString storePath_;
    AgentSessionController* controller_;
    RunListModel* runModel_;
    // Guarded: the window may delete its docks, and with them these panes, before this object.
    QPointer<AgentPane> agent_;
    QPointer<RewardsPane> rewards_;
    QPointer<RunsBrowser> runs_;
    bool listed_ = false;
};

} // namespace kwb::ui
