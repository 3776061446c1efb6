// The training values a rollout stores as each task's group fills: GRPO's advantage within the
// group, PPO's returns and GAE per model turn, and the exports reading what was stored.
#include "agent/rollout/run_advantages.h"
#include "agent/rollout/run_export.h"
#include "agent/store/trajectory_store.h"
#include "tests/agent/rollout/run_store_fixture.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <sstream>

using namespace kwb::agent;
using nlohmann::json;

namespace {

class RunAdvantagesTest : public kwb::test::RunStoreTest {
protected:
    // An ended episode of sample `sample` of `task` with two model turns.
    EpisodeId episode(const std::string& task, int sample, std::optional<double> reward,
                      EpisodeStatus status = EpisodeStatus::Finished) {
        EpisodeRecord record;
        record.task = "/data/kb/" + task + ".py";
        record.settings = {{"run_id", run_}, {"run_task", task}, {"run_sample", sample}};
        auto created = store_->createEpisode(record);
        EXPECT_TRUE(created.ok());
        const EpisodeId id = created.value().id;
        append(id, EventKind::SystemPrompt, {{"role", "system"}, {"text", "You write kernels."}});
        append(id, EventKind::UserMessage, {{"role", "user"}, {"text", "Make " + task + " fast."}});
        append(id, EventKind::AssistantMessage, {{"role", "assistant"}, {"text", "Looking."}});
        append(id, EventKind::UserMessage, {{"role", "user"}, {"text", "Go on."}});
        append(id, EventKind::AssistantMessage, {{"role", "assistant"}, {"text", "Done."}});
        EpisodeOutcome outcome;
        outcome.status = status;
        outcome.reward = reward;
        outcome.cause = status == EpisodeStatus::Failed ? "task_too_large" : "model_stopped";
        EXPECT_TRUE(store_->finishEpisode(id, outcome).ok());
        return id;
    }

    std::map<EpisodeId, EpisodeAdvantage> stored() {
        auto loaded = store_->loadAdvantages(run_);
        EXPECT_TRUE(loaded.ok()) << loaded.error().message;
        std::map<EpisodeId, EpisodeAdvantage> out;
        if (loaded)
            for (const auto& a : loaded.value())
                out[a.episode] = a;
        return out;
    }
};

} // namespace

TEST_F(RunAdvantagesTest, EachGroupsScoredEpisodesGetTheirAdvantagesAndTurnReturnsStored) {
    const EpisodeId a0 = episode("a", 0, 3.0);
    const EpisodeId a1 = episode("a", 1, 1.0);
    const EpisodeId a2 = episode("a", 2, -1.0);
    const EpisodeId b0 = episode("b", 0, 2.0);
    const EpisodeId c0 = episode("c", 0, std::nullopt, EpisodeStatus::Failed);

    auto written = storeRunAdvantages(*store_, run_, 3);
    ASSERT_TRUE(written.ok()) << written.error().message;
    EXPECT_EQ(written.value(), 4); // the failed episode is nobody's sample
    const auto values = stored();
    ASSERT_EQ(values.size(), 4u);
    EXPECT_EQ(values.count(c0), 0u);

    // Group a: mean 1, population deviation sqrt(8/3).
    const double deviation = std::sqrt(8.0 / 3.0);
    EXPECT_NEAR(values.at(a0).advantage, 2.0 / deviation, 1e-12);
    EXPECT_NEAR(values.at(a1).advantage, 0.0, 1e-12);
    EXPECT_NEAR(values.at(a2).advantage, -2.0 / deviation, 1e-12);
    EXPECT_TRUE(values.at(a0).groupComplete);
    EXPECT_EQ(values.at(a0).groupSize, 3);
    EXPECT_EQ(values.at(a0).task, "a");
    // Group b has one of its three samples: no spread, advantage 0, not complete.
    EXPECT_EQ(values.at(b0).advantage, 0.0);
    EXPECT_FALSE(values.at(b0).groupComplete);
    EXPECT_EQ(values.at(b0).groupSize, 1);
    // Two model turns, the reward on the last: returns undiscounted, GAE decays by lambda.
    EXPECT_EQ(values.at(a0).turnReturns, (std::vector<double>{3.0, 3.0}));
    ASSERT_EQ(values.at(a0).turnGaeAdvantages.size(), 2u);
    EXPECT_NEAR(values.at(a0).turnGaeAdvantages[0], 0.95 * 3.0, 1e-12);
    EXPECT_EQ(values.at(a0).turnGaeAdvantages[1], 3.0);
    EXPECT_FALSE(values.at(a0).computedAt.empty());

    // A new sample of b recomputes b's group only, and completes nothing yet.
    const EpisodeId b1 = episode("b", 1, -1.0);
    written = storeRunAdvantages(*store_, run_, 3, "b");
    ASSERT_TRUE(written.ok());
    EXPECT_EQ(written.value(), 2);
    const auto again = stored();
    EXPECT_NEAR(again.at(b0).advantage, 1.0, 1e-12); // (2 - 0.5) / 1.5
    EXPECT_NEAR(again.at(b1).advantage, -1.0, 1e-12);
    EXPECT_EQ(again.at(b1).groupSize, 2);
    EXPECT_EQ(again.at(a0).computedAt, values.at(a0).computedAt);
}

// The exports give what the run stored, not a recomputation: a value written by the rollout
// (here set by hand to one no formula gives) is the one a trainer reads.
TEST_F(RunAdvantagesTest, TheExportsReadTheStoredValues) {
    const EpisodeId a0 = episode("a", 0, 3.0);
    episode("a", 1, 1.0);
    ASSERT_TRUE(storeRunAdvantages(*store_, run_, 2).ok());
    EpisodeAdvantage planted = stored().at(a0);
    planted.advantage = 0.125;
    planted.turnReturns = {7.0, 8.0};
    planted.turnGaeAdvantages = {5.0, 6.0};
    ASSERT_TRUE(store_->storeAdvantages({planted}).ok());

    for (const RunExportFormat format : {RunExportFormat::VerlSft, RunExportFormat::OpenRlhf}) {
        std::ostringstream out;
        RunExportOptions options;
        options.format = format;
        auto rows = exportRun(*store_, run_, options, out);
        ASSERT_TRUE(rows.ok()) << rows.error().message;
        ASSERT_EQ(rows.value(), 2u);
        const json first = json::parse(out.str().substr(0, out.str().find('\n')));
        EXPECT_EQ(first["advantage"], 0.125);
        if (format == RunExportFormat::VerlSft) {
            // messages: system, user, assistant, user, assistant
            EXPECT_EQ(first["turn_returns"], json::array({nullptr, nullptr, 7.0, nullptr, 8.0}));
            EXPECT_EQ(first["turn_gae_advantages"],
                      json::array({nullptr, nullptr, 5.0, nullptr, 6.0}));
        }
    }
}
