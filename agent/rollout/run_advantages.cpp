#include "agent/rollout/run_advantages.h"

#include "agent/rollout/group_advantages.h"
#include "agent/rollout/rollout_metrics.h"

#include <map>

namespace kwb::agent {

EpisodeAdvantage episodeAdvantage(const EpisodeRecord& e, RunId run, double groupAdvantage,
                                  int groupSize, bool groupComplete) {
    EpisodeAdvantage a;
    a.episode = e.id;
    a.run = run;
    a.task = e.settings.value("run_task", e.task);
    a.groupSize = groupSize;
    a.groupComplete = groupComplete;
    a.reward = e.reward.value_or(-1.0);
    a.advantage = groupAdvantage;
    const TurnReturns ppo =
        milestoneTurnReturns(static_cast<std::size_t>(std::max(0, e.turns)), a.reward);
    a.turnReturns = ppo.returns;
    a.turnGaeAdvantages = ppo.advantages;
    return a;
}

std::vector<EpisodeAdvantage> runAdvantages(const std::vector<EpisodeRecord>& episodes, RunId run,
                                            int episodesPerTask, const std::string& task) {
    std::vector<const EpisodeRecord*> scored;
    std::vector<GroupSample> samples;
    std::map<std::string, int> groupSizes;
    for (const EpisodeRecord& e : episodes) {
        const std::string group = e.settings.value("run_task", e.task);
        if (!isScoredOutcome(e.status, e.endCause) || (!task.empty() && group != task))
            continue;
        scored.push_back(&e);
        samples.push_back({group, e.reward.value_or(-1.0)});
        ++groupSizes[group];
    }
    const std::vector<double> advantages = groupAdvantages(samples);
    std::vector<EpisodeAdvantage> values;
    for (std::size_t i = 0; i < scored.size(); ++i) {
        const int size = groupSizes[samples[i].group];
        values.push_back(
            episodeAdvantage(*scored[i], run, advantages[i], size, size >= episodesPerTask));
    }
    return values;
}

StoreResult<int> storeRunAdvantages(TrajectoryStore& store, RunId run, int episodesPerTask,
                                    const std::string& task) {
    auto episodes = store.listEpisodes(EpisodeFilter::everyEpisodeOf(run));
    if (!episodes)
        return episodes.error();
    const std::vector<EpisodeAdvantage> values =
        runAdvantages(episodes.value(), run, episodesPerTask, task);
    if (values.empty())
        return 0;
    auto stored = store.storeAdvantages(values);
    if (!stored)
        return stored.error();
    return static_cast<int>(values.size());
}

} // namespace kwb::agent
