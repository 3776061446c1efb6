#pragma once

// A trajectory store in memory holding one rollout run, for the tests of what is computed from a
// run's episodes (exports, training values).
#include "agent/store/trajectory_store.h"

#include <gtest/gtest.h>
#include <memory>

namespace kwb::test {

class RunStoreTest : public testing::Test {
protected:
    void SetUp() override {
        auto opened = agent::TrajectoryStore::open(":memory:");
        ASSERT_TRUE(opened.ok()) << opened.error().message;
        store_ = std::move(opened).value();
        agent::RunRecord run;
        run.taskSet = "/data/kb";
        run.status = "finished";
        auto created = store_->createRun(run);
        ASSERT_TRUE(created.ok()) << created.error().message;
        run_ = created.value().id;
    }

    void append(agent::EpisodeId id, agent::EventKind kind, nlohmann::json payload) {
        EXPECT_TRUE(store_->appendEvent(id, kind, std::move(payload)).ok());
    }

    std::unique_ptr<agent::TrajectoryStore> store_;
    agent::RunId run_ = 0;
};

} // namespace kwb::test
