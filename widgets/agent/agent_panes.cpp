#include "widgets/agent/agent_panes.h"

#include "widgets/agent/agent_pane.h"
#include "widgets/core/agent_session_controller.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/models/run_list_model.h"
#include "widgets/runs/rewards_pane.h"
#include "widgets/runs/runs_browser.h"

namespace kwb::ui {

AgentPanes::AgentPanes(EngineBridge& bridge, const QString& storePath, QWidget* parentWidget)
    : QObject(parentWidget), bridge_(bridge), storePath_(storePath),
      controller_(new AgentSessionController(storePath, this)), runModel_(new RunListModel(this)),
      agent_(new AgentPane(*controller_, parentWidget)), rewards_(new RewardsPane(parentWidget)),
      runs_(new RunsBrowser(runModel_, parentWidget)) {
    connect(&bridge_, &EngineBridge::episodeListReady, this,
            [this](std::shared_ptr<const agent::EpisodeListSnapshot> list) {
                if (QString::fromStdString(list->storePath) != storePath_)
                    return;
                runModel_->setEpisodes(list->episodes);
                listed_ = true;
                runs_->setStatusText(
                    list->error.empty()
                        ? tr("%n episode(s) in %1. Rollout runs and their metrics are in "
                             "the Rollouts view; Aggregate treats any selection as a rollout.",
                             nullptr, static_cast<int>(list->episodes.size()))
                              .arg(storePath_)
                        : tr("Cannot read %1: %2")
                              .arg(storePath_, QString::fromStdString(list->error)));
                if (!list->error.empty())
                    emit logMessage(QString::fromStdString(list->error), true);
                emit episodeListShown();
            });
    connect(&bridge_, &EngineBridge::episodesReady, this, &AgentPanes::onEpisodes);
    connect(&bridge_, &EngineBridge::episodeExportDone, this,
            [this](bool ok, const QString& message) {
                runs_->setStatusText(message);
                emit logMessage(message, !ok);
            });

    connect(runs_, &RunsBrowser::openRequested, this, &AgentPanes::openEpisode);
    connect(runs_, &RunsBrowser::replayRequested, this, &AgentPanes::replayEpisode);
    connect(runs_, &RunsBrowser::aggregateRequested, this, &AgentPanes::aggregateEpisodes);
    connect(runs_, &RunsBrowser::refreshRequested, this, &AgentPanes::refreshRuns);
    connect(runs_, &RunsBrowser::exportRequested, this,
            [this](const std::vector<qint64>& ids, const QString& file) {
                bridge_.requestEpisodeExport(storePath_, ids, file);
            });

    connect(agent_, &AgentPane::episodeShown, rewards_, &RewardsPane::showEpisode);
    connect(rewards_, &RewardsPane::stepSelected, agent_, &AgentPane::selectStep);
    connect(agent_, &AgentPane::message, this, &AgentPanes::logMessage);
    // The live episode's row follows it in the browser without re-reading the store.
    connect(controller_, &AgentSessionController::episodeUpdated, this,
            [this](agent::EpisodeSnapshotPtr episode) {
                if (episode && episode->record.id != 0)
                    runModel_->upsert(episode->record);
            });
}

AgentPanes::~AgentPanes() {
    // The agent pane uses the controller, which dies with this object: the panes go first.
    delete agent_.data();
    delete rewards_.data();
    delete runs_.data();
}

AgentPane* AgentPanes::agentPane() const {
    return agent_.data();
}

RewardsPane* AgentPanes::rewardsPane() const {
    return rewards_.data();
}

RunsBrowser* AgentPanes::runsBrowser() const {
    return runs_.data();
}

void AgentPanes::refreshRuns() {
    bridge_.requestEpisodeList(storePath_);
}

void AgentPanes::openEpisode(qint64 id) {
    if (id != 0)
        bridge_.requestEpisodes(storePath_, {id}, QStringLiteral("open"));
}

void AgentPanes::replayEpisode(qint64 id) {
    if (id != 0)
        bridge_.requestEpisodes(storePath_, {id}, QStringLiteral("replay"));
}

void AgentPanes::aggregateEpisodes(const std::vector<qint64>& ids) {
    if (!ids.empty())
        bridge_.requestEpisodes(storePath_, ids, QStringLiteral("aggregate"));
}

void AgentPanes::onEpisodes(std::shared_ptr<const agent::EpisodeSetSnapshot> set,
                            const QString& purpose) {
    if (!set->error.empty())
        emit logMessage(QString::fromStdString(set->error), true);
    if (purpose == QLatin1String("aggregate")) {
        rewards_->showRollout(set->episodes);
        return;
    }
    if (set->episodes.empty())
        return;
    runs_->selectEpisode(set->episodes.front()->record.id);
    if (purpose == QLatin1String("replay"))
        agent_->startReplay(set->episodes.front());
    else
        agent_->showEpisode(set->episodes.front());
}

} // namespace kwb::ui
