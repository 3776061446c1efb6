// The evaluation service: tickets, the queue, cancellation wherever a ticket is, and the GPU
// lanes that keep timed stages apart (CPU mode; the lanes are tested on their own).
#include "engine/evaluation/gpu_lanes.h"
#include "engine/service/evaluation_service.h"
#include "tests/engine/evaluation_fixture.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace kwb::test {
namespace {

using namespace std::chrono_literals;

TEST(GpuLanes, ASecondTimedStageWaitsForTheGpuUntilTheFirstReleasesIt) {
    GpuLanes lanes(1);
    auto first = lanes.acquire({});
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(lanes.busyLanes(), 1);
    std::atomic<bool> second{false};
    std::thread waiter([&] {
        auto hold = lanes.acquire({});
        second = hold.has_value();
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(second.load()) << "the lane was held by the first stage";
    first.reset();
    waiter.join();
    EXPECT_TRUE(second.load());
    EXPECT_EQ(lanes.busyLanes(), 0);
}

TEST(GpuLanes, LanesAreTakenInTurnAndAStopEndsTheWait) {
    GpuLanes lanes(2);
    auto a = lanes.acquire({});
    auto b = lanes.acquire({});
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->index(), b->index());
    std::stop_source stop;
    auto pending = std::async(std::launch::async, [&] { return lanes.acquire(stop.get_token()); });
    std::this_thread::sleep_for(50ms);
    stop.request_stop();
    EXPECT_FALSE(pending.get().has_value());
    EXPECT_FALSE(GpuLanes(0).acquire({}).has_value()) << "no GPU, no lane";
}

TEST(GpuLanes, UntimedStagesShareALaneButNeverWithATimedOne) {
    GpuLanes lanes(1);
    auto verifyA = lanes.acquireShared({});
    auto verifyB = lanes.acquireShared({});
    ASSERT_TRUE(verifyA && verifyB);
    EXPECT_EQ(lanes.sharedHolds(), 2);
    EXPECT_TRUE(verifyA->shared());
    std::atomic<bool> timing{false};
    std::thread profile([&] {
        auto hold = lanes.acquire({});
        timing = hold.has_value();
        std::this_thread::sleep_for(100ms);
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(timing.load()) << "kernels of the verifications would land in its timed calls";
    // A verification that comes while the profile waits goes behind it.
    std::atomic<bool> lateVerify{false};
    std::thread late([&] {
        auto hold = lanes.acquireShared({});
        lateVerify = hold.has_value();
        EXPECT_FALSE(timing.load() && lanes.busyLanes() == 1) << "shared while the profile timed";
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(lateVerify.load());
    verifyA.reset();
    verifyB.reset();
    profile.join();
    late.join();
    EXPECT_TRUE(timing.load());
    EXPECT_TRUE(lateVerify.load());
    EXPECT_EQ(lanes.sharedHolds(), 0);
    EXPECT_EQ(lanes.busyLanes(), 0);
}

TEST(GpuLanes, SharedHoldsSpreadOverTheGpusAndAStoppedTimedWaitLetsThemThrough) {
    GpuLanes lanes(2);
    auto a = lanes.acquireShared({});
    auto b = lanes.acquireShared({});
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->index(), b->index()) << "the least shared GPU first";
    std::stop_source stop;
    auto timed = std::async(std::launch::async, [&] { return lanes.acquire(stop.get_token()); });
    std::this_thread::sleep_for(50ms);
    auto shared = std::async(std::launch::async, [&] { return lanes.acquireShared({}); });
    EXPECT_EQ(shared.wait_for(100ms), std::future_status::timeout) << "behind the waiting profile";
    stop.request_stop();
    EXPECT_FALSE(timed.get().has_value());
    auto third = shared.get();
    EXPECT_TRUE(third.has_value()) << "the stopped profile no longer holds the others back";
    EXPECT_FALSE(GpuLanes(0).acquireShared({}).has_value()) << "no GPU, no lane";
}

TEST(GpuLanes, ATimedStageTradingUpWaitsForItsOwnGpuEvenWhenAnotherIsFree) {
    GpuLanes lanes(2);
    auto verify = lanes.acquireShared({});
    auto profile = lanes.acquireShared({});
    ASSERT_TRUE(verify && profile);
    const int gpu = verify->index();
    ASSERT_NE(profile->index(), gpu);
    // The profile's process runs on `gpu` too (its CUDA_VISIBLE_DEVICES was set at its start).
    profile.reset();
    auto alone = std::async(std::launch::async, [&] { return lanes.acquire({}, gpu); });
    EXPECT_EQ(alone.wait_for(100ms), std::future_status::timeout) << "the other GPU is not its";
    EXPECT_EQ(lanes.waitingAlone(), 1);
    verify.reset();
    auto held = alone.get();
    ASSERT_TRUE(held.has_value());
    EXPECT_EQ(held->index(), gpu);
    EXPECT_FALSE(held->shared());
    EXPECT_EQ(lanes.waitingAlone(), 0);
    EXPECT_FALSE(GpuLanes(2).acquire({}, 2).has_value()) << "no such GPU";
}

class EvaluationServiceTest : public EvaluationTest {
protected:
    EvaluationRequest request(const fs::path& workspace, const std::string& tag) {
        return {EvaluationTarget::forWorkspace(workspace.string()), cpuOptions(), tag};
    }

    // A KernelBench-style pair in a folder of its own: the tiny task and an honest candidate.
    struct PairFiles {
        fs::path reference, candidate;
    };
    PairFiles writePair(const std::string& folderName) {
        const fs::path folder = root_ / folderName;
        fs::create_directories(folder);
        PairFiles pair{folder / "reference.py", folder / "sample_1.py"};
        writeText(pair.reference, kTinyTask);
        writeText(pair.candidate, tinyCandidate("        return x * self.weight * self.factor"));
        return pair;
    }
};

TEST_F(EvaluationServiceTest, TicketsRunAndPublishOneSnapshotWithTheQueueWaitAsAStage) {
    const fs::path good = makePythonWorkspace(
        kTinyTask, tinyCandidate("        return x * self.weight * self.factor"), "good");
    const fs::path broken = makePythonWorkspace(kTinyTask, "def broken(:\n", "broken");
    EvaluationService service({.python = "", .concurrentEvaluations = 1, .gpuCount = 0});
    std::atomic<int> doneCalls{0};
    EvaluationSnapshot delivered;
    std::mutex deliveredMutex;
    const EvaluationTicket first =
        service.submit(request(good, "test"),
                       {.progress = {}, .done = [&](EvaluationTicket, const EvaluationSnapshot& s) {
                            std::lock_guard lock(deliveredMutex);
                            delivered = s;
                            ++doneCalls;
                        }});
    const EvaluationTicket second = service.submit(request(broken, "test"));
    EXPECT_NE(first, second);

    const EvaluationSnapshot a = service.wait(first);
    const EvaluationSnapshot b = service.wait(second);
    ASSERT_TRUE(a && b);
    // A pure-torch candidate: it runs through every stage and is rejected as a fallback.
    EXPECT_TRUE(a->correct) << describe(*a);
    EXPECT_NE(a->stage("profile"), nullptr) << describe(*a);
    EXPECT_EQ(b->reward, -1);
    EXPECT_FALSE(b->failureKind.empty());
    for (const auto& r : {a, b}) {
        ASSERT_FALSE(r->stages.empty());
        EXPECT_EQ(r->stages.front().name, "queue");
        double stages = 0;
        for (const auto& s : r->stages)
            stages += s.seconds;
        EXPECT_LE(stages, r->totalSeconds + 1e-6);
    }
    // With one slot the second waited for the whole first evaluation.
    EXPECT_GE(b->stages.front().seconds, 0.5 * a->totalSeconds);
    EXPECT_EQ(service.state(first), TicketState::Finished);
    std::lock_guard lock(deliveredMutex);
    EXPECT_EQ(doneCalls.load(), 1);
    EXPECT_EQ(delivered.get(), a.get()) << "the callback and wait() share one snapshot";
}

TEST_F(EvaluationServiceTest, CancelStopsAQueuedTicketAtOnceAndARunningOneInItsStage) {
    const fs::path slow = makePythonWorkspace(
        kTinyTask,
        tinyCandidate("        time.sleep(120)\n        return x * self.weight * self.factor",
                      "import time\n"),
        "slow");
    EvaluationService service({.python = "", .concurrentEvaluations = 1, .gpuCount = 0});
    std::atomic<bool> verifying{false};
    const EvaluationTicket running =
        service.submit(request(slow, "slow"), {.progress =
                                                   [&](const std::string& stage) {
                                                       if (stage == "verify")
                                                           verifying = true;
                                                   },
                                               .done = {}});
    const EvaluationTicket queued = service.submit(request(slow, "queued"));
    for (int i = 0; i < 1200 && !verifying; ++i)
        std::this_thread::sleep_for(100ms);
    ASSERT_TRUE(verifying.load());
    EXPECT_EQ(service.state(queued), TicketState::Queued);
    EXPECT_EQ(service.queued(), 1u);
    EXPECT_EQ(service.running(), 1u);

    ASSERT_TRUE(service.cancel(queued));
    const EvaluationSnapshot never = service.wait(queued);
    ASSERT_TRUE(never);
    EXPECT_EQ(never->failureKind, "cancelled");
    EXPECT_EQ(never->reward, -1);
    EXPECT_TRUE(never->stages.empty()) << "nothing of it ran";
    EXPECT_FALSE(service.cancel(queued)) << "finished tickets cannot be cancelled";

    std::this_thread::sleep_for(1s); // the candidate's forward is asleep in the verify stage now
    const auto asked = std::chrono::steady_clock::now();
    ASSERT_TRUE(service.cancel(running));
    const EvaluationSnapshot stopped = service.wait(running);
    ASSERT_TRUE(stopped);
    EXPECT_EQ(stopped->failureKind, "cancelled") << describe(*stopped);
    EXPECT_LT(std::chrono::steady_clock::now() - asked, 60s)
        << "the stop reached the stage instead of waiting out its 120 s";
    EXPECT_FALSE(service.cancel(999999));
    EXPECT_EQ(service.wait(999999), nullptr);
}

// The service keeps each reference's description from inspect to inspect (ReferenceDescriptions):
// the next evaluation of the same reference bytes, device and seed only imports the reference for
// the source checks; new bytes are described afresh, and a failed inspect is never kept.
TEST_F(EvaluationServiceTest, TheNextEvaluationOfAReferenceReusesItsDescriptionUntilItChanges) {
    const auto [reference, candidate] = writePair("pair");
    EvaluationService service({.python = "", .concurrentEvaluations = 1, .gpuCount = 0});
    EvaluationOptions options = cpuOptions();
    options.warmWorker = true;
    options.profile = false;
    options.seed = 11; // the seed stays part of the key: a description is found for its own seed
    auto inspectOf = [&](const fs::path& task, const std::string& tag) {
        const EvaluationSnapshot r = service.evaluate(
            {EvaluationTarget::forPair(task.string(), candidate.string()), options, tag}, {}, {});
        EXPECT_TRUE(r && r->stage("inspect")) << tag;
        return r ? *r : EvaluationResult{};
    };
    auto reused = [](const EvaluationResult& r) {
        const StageRecord* inspect = r.stage("inspect");
        return inspect && inspect->status == StageStatus::Passed &&
               inspect->summary.find("reference description reused") != std::string::npos;
    };

    const EvaluationResult first = inspectOf(reference, "first");
    EXPECT_TRUE(first.correct) << describe(first);
    EXPECT_FALSE(reused(first)) << describe(first);
    const EvaluationResult second = inspectOf(reference, "second");
    EXPECT_TRUE(second.correct) << describe(second);
    EXPECT_TRUE(reused(second)) << describe(second);
    // The record carries it, as every reader of the JSON result sees it.
    EXPECT_NE(toJson(second).dump().find("reference description reused"), std::string::npos);

    // New bytes: described afresh, and that description serves the next one.
    writeText(reference, std::string(kTinyTask) + "\n# edited\n");
    const EvaluationResult edited = inspectOf(reference, "edited");
    EXPECT_TRUE(edited.correct) << describe(edited);
    EXPECT_FALSE(reused(edited)) << describe(edited);
    EXPECT_TRUE(reused(inspectOf(reference, "edited again")));

    // A reference that raises fails inspect each time: nothing of it is kept.
    const fs::path raising = reference.parent_path() / "raising.py";
    std::string text = kTinyTask;
    const std::string forward = "        return x * self.weight * self.factor";
    text.replace(text.find(forward), forward.size(),
                 "        raise RuntimeError('the reference is broken')");
    writeText(raising, text);
    for (const char* tag : {"raising", "raising again"}) {
        const EvaluationResult broken = inspectOf(raising, tag);
        ASSERT_NE(broken.stage("inspect"), nullptr);
        EXPECT_EQ(broken.stage("inspect")->status, StageStatus::Failed) << tag << describe(broken);
        EXPECT_EQ(broken.failureKind, "task_run") << tag << describe(broken);
    }
}

// The reference edited after the service looked its description up and before the stage read it
// (here by the progress listener, which hears "inspect" just after the look-up, as an editor's
// save may land): the stage, started without the GPU's lane, declines the description and
// describes nothing; the service asks again as for a first inspect, holding the lane, and keeps
// the new bytes' description for the next evaluation.
TEST_F(EvaluationServiceTest, AReferenceEditedAfterItsLookUpIsDescribedAgainAsAFirstInspectIs) {
    const auto [reference, candidate] = writePair("edited pair");
    EvaluationService service({.python = "", .concurrentEvaluations = 1, .gpuCount = 0});
    EvaluationOptions options = cpuOptions();
    options.profile = false;
    options.seed = 5;
    auto evaluate = [&](const std::string& tag, const Evaluator::Progress& progress) {
        const EvaluationSnapshot r = service.evaluate(
            {EvaluationTarget::forPair(reference.string(), candidate.string()), options, tag},
            progress, {});
        EXPECT_TRUE(r && r->stage("inspect")) << tag;
        return r ? *r : EvaluationResult{};
    };
    auto summaryOf = [](const EvaluationResult& r) {
        const StageRecord* inspect = r.stage("inspect");
        return inspect && inspect->status == StageStatus::Passed ? inspect->summary
                                                                 : std::string("no inspect");
    };

    const EvaluationResult first = evaluate("first", {});
    EXPECT_EQ(summaryOf(first).find("reused"), std::string::npos) << describe(first);

    const EvaluationResult edited =
        evaluate("edited after the look-up", [&](const std::string& stage) {
            if (stage == "inspect")
                writeText(reference, std::string(kTinyTask) + "\n# edited after the look-up\n");
        });
    EXPECT_TRUE(edited.correct) << describe(edited);
    const std::string summary = summaryOf(edited);
    EXPECT_NE(summary.find("declined"), std::string::npos) << summary;
    EXPECT_NE(summary.find("described again holding the GPU"), std::string::npos) << summary;
    EXPECT_EQ(summary.find("reference description reused"), std::string::npos) << summary;
    int inspects = 0;
    for (const StageRecord& stage : edited.stages)
        inspects += stage.name == "inspect";
    EXPECT_EQ(inspects, 1) << "both runs are one record";

    const EvaluationResult next = evaluate("next", {});
    EXPECT_TRUE(next.correct) << describe(next);
    EXPECT_NE(summaryOf(next).find("reference description reused"), std::string::npos)
        << "the new bytes' description was kept: " << summaryOf(next);
}

// RL rollouts and KernelBench pairs draw a fresh seed per evaluation (options.seed 0, no standby
// to share a session's seed): a reference whose shapes are constants is described once for every
// seed; one whose shapes come from the seed is described afresh each time.
TEST_F(EvaluationServiceTest, AReferenceDescriptionThatNoSeedReachesServesTheNextSeedsToo) {
    const fs::path folder = root_ / "fresh seeds";
    fs::create_directories(folder);
    const fs::path constant = folder / "constant.py";
    const fs::path drawn = folder / "drawn.py";
    const fs::path candidate = folder / "sample_1.py";
    writeText(constant, kTinyTask);
    std::string randomRows = std::string("import random\n") + kTinyTask;
    const std::string inputs = "torch.randn(8, 16)";
    randomRows.replace(randomRows.find(inputs), inputs.size(),
                       "torch.randn(random.randint(2, 9), 16)");
    writeText(drawn, randomRows);
    writeText(candidate, tinyCandidate("        return x * self.weight * self.factor"));
    EvaluationService service({.python = "", .concurrentEvaluations = 1, .gpuCount = 0});
    EvaluationOptions options = cpuOptions();
    options.profile = false;
    options.seed = 0;
    options.warmWorker = false;
    auto inspectOf = [&](const fs::path& task, const std::string& tag) {
        const EvaluationSnapshot r = service.evaluate(
            {EvaluationTarget::forPair(task.string(), candidate.string()), options, tag}, {}, {});
        EXPECT_TRUE(r && r->stage("inspect")) << tag;
        const StageRecord* inspect = r ? r->stage("inspect") : nullptr;
        EXPECT_TRUE(inspect && inspect->status == StageStatus::Passed) << tag;
        return std::pair{r ? r->seed : 0,
                         inspect && inspect->summary.find("reference description reused") !=
                                        std::string::npos};
    };

    const auto [firstSeed, firstReused] = inspectOf(constant, "constant");
    EXPECT_FALSE(firstReused);
    const auto [secondSeed, secondReused] = inspectOf(constant, "constant again");
    EXPECT_NE(firstSeed, secondSeed) << "each evaluation draws its own seed";
    EXPECT_TRUE(secondReused);

    for (const char* tag : {"random rows", "random rows again"})
        EXPECT_FALSE(inspectOf(drawn, tag).second) << tag;
}

} // namespace
} // namespace kwb::test
