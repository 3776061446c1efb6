// The warm evaluation worker (one forked child per stage from a server with torch imported)
// must give the same outcomes as cold stage processes, and nothing a candidate does may reach
// the next evaluation through the shared server.
#include "engine/evaluation/gpu_lanes.h"
#include "engine/evaluation/warm_worker.h"
#include "engine/process/landlock.h"
#include "engine/process/sandbox.h"
#include "engine/system/user_directories.h"
#include "tests/engine/evaluation_fixture.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <future>
#include <latch>
#include <optional>
#include <random>
#include <thread>
#include <unistd.h>

namespace kwb::test {
namespace {

// An evaluator's resources with this test's warm workers and nothing else shared.
EvaluationResources poolOnly(WarmWorkerPool& pool) {
    EvaluationResources resources;
    resources.warmWorkers = &pool;
    return resources;
}

const char* kHonestForward = "        return x * self.weight * self.factor";

class WarmWorkerTest : public EvaluationTest {
protected:
    EvaluationOptions warmOptions() {
        EvaluationOptions options = cpuOptions();
        options.warmWorker = true;
        options.profile = false;
        return options;
    }
    int started() const { return WarmWorkerPool::shared().workersStarted(); }
    // The tiny candidates compute with torch's operators (torch_fallback, a strict flag), and
    // baselines timed beside a flagged candidate are never cached: a test that needs them cached
    // times them alone, as `kwb baseline` does. (Passing on a stale cache entry hid this.)
    void cacheBaselines(const fs::path& ws, EvaluationOptions options) {
        options.stageTimeout = std::chrono::seconds(600);
        const EvaluationResult timed = evaluator_.baseline((ws / "model.py").string(), options);
        ASSERT_TRUE(timed.eager.available) << describe(timed);
    }
};

TEST_F(WarmWorkerTest, ServesSeveralEvaluationsFromOneServer) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kHonestForward));
    const int before = started();
    EvaluationResult first = evaluateWorkspace(ws, warmOptions());
    EXPECT_TRUE(first.correct) << describe(first);
    EXPECT_EQ(first.checksPassed, 2);
    EvaluationResult second = evaluateWorkspace(ws, warmOptions());
    EXPECT_TRUE(second.correct) << describe(second);
    // inspect, verify and both runs' stages: one server.
    EXPECT_EQ(started() - before, 1);
    EXPECT_GE(WarmWorkerPool::shared().workers(), 1u);

    // Every second accounted: the server's start is the first warm stage's, not lost between
    // stages, and the stages cover the evaluation's wall-clock.
    ASSERT_NE(first.stage("inspect"), nullptr);
    EXPECT_TRUE(first.stage("inspect")->workerStarted);
    EXPECT_GT(first.stage("inspect")->startSeconds, 0.0);
    EXPECT_LT(first.stage("inspect")->startSeconds, first.stage("inspect")->seconds);
    for (const auto& s : second.stages)
        EXPECT_FALSE(s.workerStarted) << s.name;
    // Within 5 % of a warm evaluation's quarter of a second: the scratch folder's removal is
    // the workspace stage's, a stage's spec and lane release are the stage's.
    for (const EvaluationResult* r : {&first, &second})
        EXPECT_GE(r->stageSeconds(), 0.95 * r->totalSeconds)
            << "stages " << r->stageSeconds() << " s of " << r->totalSeconds << " s";
}

TEST_F(WarmWorkerTest, AStopEndsTheRunningStageChildAndTheServerKeepsServing) {
    const fs::path ws =
        makePythonWorkspace(kTinyTask, tinyCandidate("        while True:\n            pass"));
    EvaluationOptions options = warmOptions();
    options.stageTimeout = std::chrono::seconds(300);
    const int before = started();
    const EvaluationResult r =
        evaluateAndStopDuring(ws, options, "verify", std::chrono::milliseconds(1500));
    EXPECT_EQ(r.failureKind, "cancelled") << describe(r);
    EXPECT_NE(r.failureMessage.find("while verify ran"), std::string::npos) << r.failureMessage;

    // Only the stage child went: the same server serves the next evaluation.
    writeText(ws / "model_new.py", tinyCandidate(kHonestForward));
    const EvaluationResult next = evaluateWorkspace(ws, options);
    EXPECT_TRUE(next.correct) << describe(next);
    EXPECT_EQ(started() - before, 1);
}

// The disk budget under a warm worker: the server's whole tree is watched, yet another process
// filling the same disk (a concurrent evaluation, a training run's checkpoints) is not this
// stage's doing; writing into its own HOME is.
TEST_F(WarmWorkerTest, AnotherWriterOnTheSameDiskIsNotBlamedOnTheStage) {
    EvaluationOptions options = warmOptions();
    options.diskLimitBytes = 96ULL << 20;
    const fs::path ws = makePythonWorkspace(
        kTinyTask,
        tinyCandidate("        time.sleep(1.5)\n" + std::string(kHonestForward), "import time\n"));
    // Beside kwb's cache; with bubblewrap in the host's /tmp, where concurrent evaluations and
    // torch's compile caches write (the stage has a /tmp of its own there).
    const fs::path filler =
        fs::path(sandboxIsolates() ? fs::temp_directory_path().string() : cacheDirectory()) /
        ("kwb-test-filler-" + std::to_string(::getpid()));
    std::atomic<bool> verifying{false};
    std::jthread writer([&](std::stop_token done) {
        while (!verifying && !done.stop_requested())
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the stage's watch began
        std::ofstream out(filler, std::ios::binary);
        const std::string chunk(8 << 20, 'x');
        for (int i = 0; i < 32 && !done.stop_requested(); ++i) { // 256 MiB, on the disk at once
            out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
            out.flush();
            ::sync();
        }
    });
    const EvaluationResult r = evaluator_.evaluate(
        EvaluationTarget::forWorkspace(ws.string()), options,
        [&](const std::string& stage) { verifying = verifying || stage == "verify"; });
    writer.request_stop();
    writer.join();
    std::error_code ec;
    fs::remove(filler, ec);
    EXPECT_TRUE(r.correct) << describe(r);
    EXPECT_NE(r.failureKind, "resource_limit") << describe(r);

    // The same budget against a candidate that writes into its HOME (the runs folder).
    const fs::path flooder = makePythonWorkspace(
        kTinyTask,
        tinyCandidate("        open(os.path.join(os.environ['HOME'], 'flood.bin'), 'wb')"
                      ".write(b'x' * (256 << 20)); time.sleep(2.0)\n" +
                          std::string(kHonestForward),
                      "import os, time\n"),
        "flooder");
    const EvaluationResult flooded = evaluateWorkspace(flooder, options);
    EXPECT_EQ(flooded.failureKind, "resource_limit") << describe(flooded);
}

TEST_F(WarmWorkerTest, TamperingDiesWithItsChild) {
    // The candidate rebinds torch functions and the clock at import. In a shared interpreter
    // that would poison every later evaluation; in a forked child it ends with the child.
    const fs::path ws = makePythonWorkspace(
        kTinyTask, tinyCandidate(kHonestForward, "import time\ntorch.mul = lambda *a, **k: None\n"
                                                 "time.perf_counter = lambda: 0.0\n"));
    EvaluationResult tampered = evaluateWorkspace(ws, warmOptions());
    bool flagged = false;
    for (const auto& flag : tampered.flags)
        flagged |= flag.code == "monkey_patching" || flag.code == "timer_tampering";
    EXPECT_TRUE(flagged) << describe(tampered);
    EXPECT_EQ(tampered.reward, -1);

    writeText(ws / "model_new.py", tinyCandidate(kHonestForward));
    EvaluationResult clean = evaluateWorkspace(ws, warmOptions());
    EXPECT_TRUE(clean.correct) << describe(clean);
    for (const auto& flag : clean.flags) {
        EXPECT_NE(flag.code, "monkey_patching") << flag.reason;
        EXPECT_NE(flag.code, "timer_tampering") << flag.reason;
    }
}

TEST_F(WarmWorkerTest, CrashAndTimeoutAreReportedAndTheServerKeepsServing) {
    const fs::path ws = makePythonWorkspace(
        kTinyTask,
        tinyCandidate("        ctypes.string_at(0)\n        return x", "import ctypes\n"));
    EvaluationResult crashed = evaluateWorkspace(ws, warmOptions());
    EXPECT_EQ(crashed.failureKind, "crashed") << describe(crashed);
    EXPECT_NE(crashed.failureMessage.find("SIGSEGV"), std::string::npos) << crashed.failureMessage;
    const int afterCrash = started();

    writeText(ws / "model_new.py", tinyCandidate("        while True:\n            pass"));
    EvaluationOptions options = warmOptions();
    options.stageTimeout = std::chrono::seconds(8);
    EvaluationResult hung = evaluateWorkspace(ws, options);
    EXPECT_EQ(hung.failureKind, "timeout") << describe(hung);
    EXPECT_NE(hung.failureMessage.find("verify"), std::string::npos);

    writeText(ws / "model_new.py", tinyCandidate(kHonestForward));
    EvaluationResult fine = evaluateWorkspace(ws, warmOptions());
    EXPECT_TRUE(fine.correct) << describe(fine);
    // The timeout used its own stage timeout, so that run had a server of its own; the
    // default-timeout server that saw the crash served the last run without a restart.
    EXPECT_LE(started() - afterCrash, 1);
}

TEST_F(WarmWorkerTest, OutputFloodIsCappedLikeAColdStage) {
    const fs::path ws =
        makePythonWorkspace(kTinyTask, tinyCandidate("        sys.stdout.write('spam ' * 2000000)\n"
                                                     "        sys.stdout.flush()\n" +
                                                         std::string(kHonestForward),
                                                     "import sys\n"));
    EvaluationResult r = evaluateWorkspace(ws, warmOptions());
    EXPECT_TRUE(r.correct) << describe(r);
    for (const auto& stage : r.stages)
        EXPECT_LT(stage.log.size(), 300u * 1024) << stage.name;
}

bool preparedAhead(const EvaluationResult& r, const std::string& stage) {
    for (const auto& s : r.stages)
        if (s.name == stage)
            return s.log.find("prepared before the request") != std::string::npos;
    return false;
}

// From a warm stage's accounting line: the child's life, from the server's go to its "result
// written" (the standby's preparation still running when the request came is in it).
std::optional<double> childSeconds(const StageRecord& stage) {
    const std::string marker = "the child ";
    const auto at = stage.log.find(marker);
    if (at == std::string::npos)
        return std::nullopt;
    return std::strtod(stage.log.c_str() + at + marker.size(), nullptr);
}

TEST_F(WarmWorkerTest, NextEvaluationRunsOnStandbyChildrenPreparedInAdvance) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kHonestForward));
    EvaluationOptions options = warmOptions();
    options.profile = true;
    // The first run times eager and torch.compile (a session's first evaluation of a task does);
    // the standby for the next profile is prepared for the candidate alone, as the next request
    // will be once the baselines are cached.
    cacheBaselines(ws, options);
    EvaluationOptions firstOptions = options;
    firstOptions.refreshBaselines = true;
    EvaluationResult first = evaluateWorkspace(ws, firstOptions);
    ASSERT_TRUE(first.correct) << describe(first);
    EXPECT_FALSE(first.baselinesFromCache);
    EXPECT_FALSE(preparedAhead(first, "verify"));
    // torch.compile on the CPU writes a precompiled header of over 64 MiB: a stage child whose
    // file size limit was lowered to a log size lost the compiled baseline.
    EXPECT_TRUE(first.compiledBaseline.available) << first.compiledBaseline.unavailableReason;

    // The same workspace and settings again: verify and profile come from standby children
    // that prepared the reference side while nothing was being evaluated.
    EvaluationResult second = evaluateWorkspace(ws, options);
    EXPECT_TRUE(second.correct) << describe(second);
    EXPECT_TRUE(preparedAhead(second, "verify")) << describe(second);
    EXPECT_TRUE(preparedAhead(second, "profile")) << describe(second);
    EXPECT_TRUE(second.candidate.available);
    EXPECT_TRUE(second.baselinesFromCache);
    // The time outside the stage process is accounted for: the child's life lies between the
    // stage process's own time and the stage's wall time.
    const StageRecord* verify = second.stage("verify");
    ASSERT_NE(verify, nullptr);
    const std::optional<double> child = childSeconds(*verify);
    ASSERT_TRUE(child.has_value()) << verify->log;
    EXPECT_GE(*child + 0.01, verify->seconds - verify->startSeconds) << verify->log;
    EXPECT_LE(*child, verify->seconds + 0.01) << verify->log;

    // A wrong candidate on a prepared stage is judged as in a cold one.
    writeText(ws / "model_new.py", tinyCandidate("        return x * self.weight * 3.0"));
    EvaluationResult wrong = evaluateWorkspace(ws, options);
    EXPECT_FALSE(wrong.correct) << describe(wrong);
    EXPECT_EQ(wrong.failureKind, "numerical_mismatch") << describe(wrong);
    EXPECT_TRUE(preparedAhead(wrong, "verify")) << describe(wrong);

    // Other settings do not fit the standby's preparation: a fresh child runs the stage.
    writeText(ws / "model_new.py", tinyCandidate(kHonestForward));
    EvaluationOptions moreChecks = options;
    moreChecks.checks = 3;
    EvaluationResult other = evaluateWorkspace(ws, moreChecks);
    EXPECT_TRUE(other.correct) << describe(other);
    EXPECT_EQ(other.checksPassed, 3);
    EXPECT_FALSE(preparedAhead(other, "verify"));
}

TEST_F(WarmWorkerTest, TheInteractiveLoopRebuildsAnEditedKernelInAWarmBuildServer) {
    const fs::path ws = makeWorkspace("01_gelu", true, "gelu_loop");
    const EvaluationOptions options = warmOptions(); // standby children: the interactive loop
    const auto target = EvaluationTarget::forWorkspace(ws.string());
    // Workers that outlive the call, as a service's do.
    WarmWorkerPool pool;
    Evaluator loop({}, poolOnly(pool));
    EvaluationResult first = loop.evaluate(target, options);
    ASSERT_TRUE(first.correct) << describe(first);
    EXPECT_EQ(pool.workersStarted(), 2) << "a server for the build and one for the other stages";

    // A one-line edit: rebuilt (not the cache's, which holds every source text built before:
    // the edit is one no build has seen), in the build server already running.
    const std::string unseen = "// edit " + std::to_string(std::random_device{}()) + "\n";
    patchFile(ws / "kernels" / "gelu_cpu.cpp", "#include <cmath>\n", "#include <cmath>\n" + unseen);
    EvaluationResult second = loop.evaluate(target, options);
    EXPECT_TRUE(second.correct) << describe(second);
    ASSERT_NE(second.stage("compile"), nullptr);
    EXPECT_NE(second.stage("compile")->log.find("recompiled:"), std::string::npos)
        << second.stage("compile")->log;
    EXPECT_EQ(pool.workersStarted(), 2);

    // A one-shot evaluation (the process-wide workers, gone with the call) builds cold: a
    // server for one build would only cost its start.
    const int before = started();
    patchFile(ws / "kernels" / "gelu_cpu.cpp", unseen, unseen + unseen);
    EvaluationResult once = evaluateWorkspace(ws, options);
    EXPECT_TRUE(once.correct) << describe(once);
    EXPECT_LE(started() - before, 1) << "at most the stages' server, no build server";
    pool.shutdown();
}

// The planting candidates' attempt on one file outside their own folders: what each printed
// tells the test that the attempt ran and was refused.
const std::string kPlant = R"(import glob
import os


def _plant(path, shown):
    try:
        with open(path, "a") as f:
            f.write("\n# planted by a\n")
        print("PLANTED", shown)
    except OSError as exc:
        print("REFUSED", shown, type(exc).__name__)
)";

TEST_F(WarmWorkerTest, OneServerServesEveryWorkspaceBelowOneFolderAndNoneWritesAnothers) {
    // Rollout episodes and KernelBench pairs sit side by side: where the kernel lets the stage
    // child confine itself (Landlock under bubblewrap), they share one server. The candidate of
    // the first workspace tries to plant files in its sibling and in every other workspace's runs
    // folder, and to overwrite its own reference; then shows that its own folders still work.
    const std::string planter = kPlant + R"(
_home = os.environ["HOME"]
for target in glob.glob(os.path.join(os.path.dirname(os.getcwd()), "*", "model_new.py")) + \
        [os.path.join(d, "planted-by-a") for d in glob.glob(os.path.join(os.path.dirname(_home), "*"))
         if os.path.realpath(d) != os.path.realpath(_home)] + [os.path.join(os.getcwd(), "model.py")]:
    if os.path.realpath(os.path.dirname(target)) == os.path.realpath(os.getcwd()) and \
            target.endswith("model_new.py"):
        continue
    _plant(target, target)
with open(os.path.join(_home, "own-file"), "w") as f:
    f.write("a stage writes its own runs folder")
)";
    const fs::path a =
        makePythonWorkspace(kTinyTask, tinyCandidate(kHonestForward, planter), "episode_a");
    const fs::path b = makePythonWorkspace(kTinyTask, tinyCandidate(kHonestForward), "episode_b");
    const std::string referenceA = readText(a / "model.py");
    const std::string referenceB = readText(b / "model.py");
    const std::string candidateB = readText(b / "model_new.py");

    WarmWorkerPool pool;
    Evaluator service({}, poolOnly(pool));
    const EvaluationOptions options = warmOptions();
    // b first: its runs folder exists when a's candidate looks for others'.
    const EvaluationResult first =
        service.evaluate(EvaluationTarget::forWorkspace(b.string()), options);
    ASSERT_TRUE(first.correct) << describe(first);
    const EvaluationResult planted =
        service.evaluate(EvaluationTarget::forWorkspace(a.string()), options);
    EXPECT_TRUE(planted.correct) << describe(planted);
    const EvaluationResult again =
        service.evaluate(EvaluationTarget::forWorkspace(b.string()), options);
    EXPECT_TRUE(again.correct) << describe(again);

    const bool shareable = landlockAbi() >= 1 && bubblewrapUsable();
    // The interactive loop's two servers (builds, other stages; see above), each workspace's own
    // where they cannot be shared.
    EXPECT_EQ(pool.workersStarted(), shareable ? 2 : 4);
    ASSERT_NE(planted.stage("verify"), nullptr);
    const std::string& log = planted.stage("verify")->log;
    EXPECT_EQ(log.find("PLANTED"), std::string::npos) << log;
    EXPECT_NE(log.find("REFUSED"), std::string::npos) << "the candidate's attempts ran: " << log;
    EXPECT_EQ(readText(b / "model.py"), referenceB);
    EXPECT_EQ(readText(b / "model_new.py"), candidateB);
    EXPECT_EQ(readText(a / "model.py"), referenceA);
    for (const auto& entry : fs::recursive_directory_iterator(
             fs::path(cacheDirectory()) / "runs", fs::directory_options::skip_permission_denied))
        EXPECT_NE(entry.path().filename(), "planted-by-a") << entry.path();
    pool.shutdown();
}

TEST_F(WarmWorkerTest, KernelBenchPairsShareOneServerAndNoneWritesAnothersBuild) {
    // Each pair's candidate may write its own load_inline build folder (cache/pairs/<hash>),
    // which used to give every pair a server of its own: a stream of distinct pairs paid the
    // server's start (the torch import) in each one's first stage. The first pair's candidate
    // tries to plant a file in every other pair's build folder, then writes its own.
    const std::string planter = kPlant + R"(
_own = os.environ["TORCH_EXTENSIONS_DIR"]
for target in glob.glob(os.path.join(os.path.dirname(_own), "*")):
    if os.path.realpath(target) != os.path.realpath(_own):
        _plant(os.path.join(target, "planted-by-a"), target)
with open(os.path.join(_own, "own-file"), "w") as f:
    f.write("a pair's stage writes its own build folder")
)";
    auto makePair = [&](const std::string& name, const std::string& candidate) {
        const fs::path folder = root_ / "pairs" / name;
        fs::create_directories(folder);
        writeText(folder / "reference.py", kTinyTask);
        writeText(folder / "candidate.py", candidate);
        return EvaluationTarget::forPair((folder / "reference.py").string(),
                                         (folder / "candidate.py").string());
    };
    const auto b = makePair("pair_b", tinyCandidate(kHonestForward));
    const auto a = makePair("pair_a", tinyCandidate(kHonestForward, planter));

    WarmWorkerPool pool;
    Evaluator service({}, poolOnly(pool));
    const EvaluationOptions options = warmOptions();
    // b first: its build folder exists when a's candidate looks for others'.
    const EvaluationResult first = service.evaluate(b, options);
    ASSERT_TRUE(first.correct) << describe(first);
    const int serversForOnePair = pool.workersStarted();
    const EvaluationResult planted = service.evaluate(a, options);
    EXPECT_TRUE(planted.correct) << describe(planted);
    const EvaluationResult again = service.evaluate(b, options);
    EXPECT_TRUE(again.correct) << describe(again);

    ASSERT_NE(planted.stage("verify"), nullptr);
    const std::string& log = planted.stage("verify")->log;
    EXPECT_EQ(log.find("PLANTED"), std::string::npos) << log;
    if (landlockAbi() >= 1 && bubblewrapUsable()) {
        EXPECT_EQ(pool.workersStarted(), serversForOnePair) << "the second pair started a server";
        // The shared server binds every pair's build folder; only the child's confinement stops
        // the writes.
        EXPECT_NE(log.find("REFUSED"), std::string::npos)
            << "the candidate's attempts ran: " << log;
    } else {
        // A server of its own binds no other pair's folder.
        EXPECT_GT(pool.workersStarted(), serversForOnePair);
    }
    std::size_t ownFiles = 0;
    for (const auto& entry : fs::recursive_directory_iterator(
             fs::path(cacheDirectory()) / "pairs", fs::directory_options::skip_permission_denied)) {
        EXPECT_NE(entry.path().filename(), "planted-by-a") << entry.path();
        ownFiles += entry.path().filename() == "own-file";
    }
    EXPECT_GE(ownFiles, 1U) << "the candidate could not write its own build folder";
    pool.shutdown();
}

TEST_F(WarmWorkerTest, EvaluationsOfSiblingWorkspacesAtOnceGetServersOfTheirOwn) {
    // A rollout evaluates several episodes at once: one busy shared server must not make the
    // others wait while the pool has room for more.
    const fs::path a = makePythonWorkspace(kTinyTask, tinyCandidate(kHonestForward), "at_once_a");
    const fs::path b = makePythonWorkspace(kTinyTask, tinyCandidate(kHonestForward), "at_once_b");
    WarmWorkerPool pool(4);
    Evaluator service({}, poolOnly(pool));
    EvaluationOptions options = warmOptions();
    options.standby = false; // no build server: only the stages' servers are counted
    // Threads that live through the whole test, as a service's do: a server dies with the
    // thread that started it (bubblewrap's parent-death signal follows the thread).
    EvaluationResult first, second, firstAgain, secondAgain;
    int startedAtOnce = 0;
    std::latch bothDone(2), counted(1), firstAgainDone(1), allDone(3);
    {
        const auto evaluate = [&](const fs::path& ws) {
            return service.evaluate(EvaluationTarget::forWorkspace(ws.string()), options);
        };
        std::jthread one([&] {
            first = evaluate(a);
            bothDone.count_down();
            counted.wait();
            firstAgain = evaluate(b); // the other workspace, on an idle server
            firstAgainDone.count_down();
            allDone.arrive_and_wait();
        });
        std::jthread two([&] {
            second = evaluate(b);
            bothDone.count_down();
            firstAgainDone.wait();
            secondAgain = evaluate(a);
            allDone.arrive_and_wait();
        });
        bothDone.wait();
        startedAtOnce = pool.workersStarted();
        counted.count_down();
        allDone.arrive_and_wait();
    }
    EXPECT_TRUE(first.correct) << describe(first);
    EXPECT_TRUE(second.correct) << describe(second);
    // Both started at once: the second found the first's server busy starting (seconds) and
    // started its own.
    EXPECT_EQ(startedAtOnce, 2);
    // One after the other, the idle servers serve again, whichever workspace: no third start.
    EXPECT_TRUE(firstAgain.correct) << describe(firstAgain);
    EXPECT_TRUE(secondAgain.correct) << describe(secondAgain);
    EXPECT_EQ(pool.workersStarted(), 2);
    pool.shutdown();
}

TEST_F(WarmWorkerTest, AChangedTaskFileIsNotJudgedOnAStalePreparation) {
    // Pair mode: the reference lives outside a workspace and may change between evaluations.
    const fs::path reference = root_ / "pair_task.py";
    const fs::path candidate = root_ / "pair_candidate.py";
    writeText(reference, kTinyTask);
    writeText(candidate, tinyCandidate(kHonestForward));
    EvaluationOptions options = warmOptions();
    const auto target = EvaluationTarget::forPair(reference.string(), candidate.string());
    EvaluationResult first = evaluator_.evaluate(target, options);
    ASSERT_TRUE(first.correct) << describe(first);

    // The task now triples. Whether the standby prepared the old task's outputs (which the
    // honest candidate would still match) or already read the new file depends on timing; the
    // verdict must be the new task's either way. (test_standby.py checks the digest rule itself.)
    patchFile(reference, "return x * self.weight * self.factor",
              "return x * self.weight * self.factor * 3.0");
    EvaluationResult second = evaluator_.evaluate(target, options);
    EXPECT_FALSE(second.correct) << describe(second);
    EXPECT_EQ(second.failureKind, "numerical_mismatch") << describe(second);
}

// Under the evaluation service a warm timing stage holds its lane shared until its timed calls:
// its start, inputs and the candidate's import run beside other evaluations' untimed work. Only
// then does it ask for the lane alone, and that wait is the service's queue, not the stage's
// time: it is recorded apart and counts against no timeout. A stop during it ends it at once.
TEST_F(WarmWorkerTest, ATimedStageSharesItsLaneUntilItsTimedCalls) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kHonestForward));
    EvaluationOptions options = warmOptions();
    options.profile = true;
    options.standby = false;
    WarmWorkerPool pool;
    GpuLanes cpuLane(1); // a timed stage on the CPU holds the cores as one on a GPU holds it
    EvaluationResources resources = poolOnly(pool);
    resources.cpuTimingLane = &cpuLane;
    Evaluator service({}, resources);
    const auto target = EvaluationTarget::forWorkspace(ws.string());
    // Short, to show that the wait for the lane alone is not the stage's time.
    options.stageTimeout = std::chrono::seconds(10);
    // A warm-up evaluation: the server's start and the task's baselines are not the point.
    cacheBaselines(ws, options);
    ASSERT_TRUE(service.evaluate(target, options).correct);
    const int servers = pool.workersStarted();

    // Another evaluation's untimed work holds the lane shared.
    std::optional<GpuLanes::Hold> other = cpuLane.acquireShared({});
    ASSERT_TRUE(other.has_value());
    auto running =
        std::async(std::launch::async, [&] { return service.evaluate(target, options); });
    for (int i = 0; i < 600 && cpuLane.waitingAlone() == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(cpuLane.waitingAlone(), 1) << "the profile stage never asked for the lane alone";
    EXPECT_EQ(cpuLane.sharedHolds(), 1) << "it let its shared hold go while it waits";
    // Longer than the stage's timeout: the wait is not the stage's.
    std::this_thread::sleep_for(std::chrono::seconds(12));
    EXPECT_EQ(running.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
    other.reset();
    const EvaluationResult r = running.get();
    EXPECT_TRUE(r.correct) << describe(r);
    const StageRecord* profile = r.stage("profile");
    ASSERT_NE(profile, nullptr) << describe(r);
    EXPECT_EQ(profile->status, StageStatus::Passed) << describe(r);
    EXPECT_GE(profile->aloneLaneWaitSeconds, 11.0);
    EXPECT_LT(profile->laneWaitSeconds, 1.0) << "it began at once, sharing the lane";
    EXPECT_NE(profile->log.find("wait for the GPU alone"), std::string::npos) << profile->log;
    EXPECT_EQ(cpuLane.sharedHolds() + cpuLane.busyLanes(), 0) << "every hold let go";
    EXPECT_EQ(pool.workersStarted(), servers);

    // A stop while the stage waits for the lane alone ends it there.
    other.emplace(std::move(*cpuLane.acquireShared({})));
    std::stop_source stop;
    auto stopped = std::async(std::launch::async, [&] {
        return service.evaluate(target, options, {}, stop.get_token());
    });
    for (int i = 0; i < 600 && cpuLane.waitingAlone() == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(cpuLane.waitingAlone(), 1);
    const auto asked = std::chrono::steady_clock::now();
    stop.request_stop();
    ASSERT_EQ(stopped.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    const EvaluationResult cancelled = stopped.get();
    EXPECT_EQ(cancelled.failureKind, "cancelled") << describe(cancelled);
    EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(10));
    EXPECT_EQ(cpuLane.waitingAlone(), 0);
    other.reset();
    // The server kept serving.
    EXPECT_TRUE(service.evaluate(target, options).correct);
    EXPECT_EQ(pool.workersStarted(), servers);

    // A stop while the stage waits for even a shared hold (another stage times alone) ends it
    // before its child starts, and its record says what it waited for: the CPU's turn to time.
    std::optional<GpuLanes::Hold> timing = cpuLane.acquire({});
    ASSERT_TRUE(timing.has_value());
    std::atomic<bool> profiling{false};
    std::stop_source beforeItBegan;
    auto waiting = std::async(std::launch::async, [&] {
        return service.evaluate(
            target, options,
            [&](const std::string& stage) {
                if (stage == "profile")
                    profiling = true;
            },
            beforeItBegan.get_token());
    });
    for (int i = 0; i < 600 && !profiling; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(profiling) << "the evaluation never reached its profile stage";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    beforeItBegan.request_stop();
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    const EvaluationResult notBegun = waiting.get();
    EXPECT_EQ(notBegun.failureKind, "cancelled") << describe(notBegun);
    const StageRecord* waited = notBegun.stage("profile");
    ASSERT_NE(waited, nullptr) << describe(notBegun);
    EXPECT_EQ(waited->summary, "cancelled: cancelled while waiting to time on the CPU");
    timing.reset();
    EXPECT_TRUE(service.evaluate(target, options).correct);
    pool.shutdown();
}

// Two timing stages of one server: the second waits for the busy server while the first, inside
// it, waits for its lane alone. The waiting one must hold no lane then (a shared hold taken
// before the server would keep the first from its timed calls, and the first holds the server).
TEST_F(WarmWorkerTest, AStageWaitingForABusyServerHoldsNoLane) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kHonestForward));
    EvaluationOptions options = warmOptions();
    options.profile = true;
    options.standby = false;
    WarmWorkerPool pool(1);
    GpuLanes cpuLane(1);
    EvaluationResources resources = poolOnly(pool);
    resources.cpuTimingLane = &cpuLane;
    Evaluator service({}, resources);
    const auto target = EvaluationTarget::forWorkspace(ws.string());
    ASSERT_TRUE(service.evaluate(target, options).correct); // the server started, baselines cached
    auto first = std::async(std::launch::async, [&] { return service.evaluate(target, options); });
    auto second = std::async(std::launch::async, [&] { return service.evaluate(target, options); });
    ASSERT_EQ(first.wait_for(std::chrono::seconds(300)), std::future_status::ready)
        << "the evaluations wait for each other";
    ASSERT_EQ(second.wait_for(std::chrono::seconds(300)), std::future_status::ready);
    for (auto* done : {&first, &second}) {
        const EvaluationResult r = done->get();
        EXPECT_TRUE(r.correct) << describe(r);
        EXPECT_NE(r.stage("profile"), nullptr) << describe(r);
    }
    EXPECT_EQ(pool.workersStarted(), 1);
    pool.shutdown();
}

// The tiny task, but its import in a warm worker's standby preparation (and nowhere else) waits
// while a file `hold-standby` lies beside it: the test decides when that preparation is made.
std::string taskHeldInStandby() {
    return std::string(kTinyTask) + R"PY(

import os as _os
import sys as _sys
import time as _time


def _in_standby_preparation():
    frame = _sys._getframe()
    while frame is not None:
        if frame.f_code.co_filename.endswith(_os.path.join("stages", "standby.py")):
            return True
        frame = frame.f_back
    return False


while _in_standby_preparation() and _os.path.exists(
        _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "hold-standby")):
    _time.sleep(0.05)
)PY";
}

// Removes the hold on any way out of a test, so that no preparation is left waiting for it.
struct StandbyHold {
    fs::path path;
    explicit StandbyHold(fs::path file) : path(std::move(file)) { writeText(path, ""); }
    ~StandbyHold() { release(); }
    void release() {
        std::error_code ec;
        fs::remove(path, ec);
    }
};

bool waitFor(const std::function<bool()>& condition, std::chrono::seconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!condition() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return condition();
}

// A standby preparation runs on the device (on the CPU here: its cores), so under the service's
// lanes it holds its lane shared from before its children fork until each is prepared: another
// evaluation's timed calls wait for it as for a verify. A stage of the same workspace that comes
// meanwhile waits for that server, whose children are its own stages made ready, instead of
// starting another, and records the wait as its preparation wait.
TEST_F(WarmWorkerTest, AStandbyPreparationHoldsItsLaneSharedUntilItIsMade) {
    const fs::path ws = makePythonWorkspace(taskHeldInStandby(), tinyCandidate(kHonestForward));
    EvaluationOptions options = warmOptions();
    options.profile = true;
    GpuLanes cpuLane(1); // before the pool: its preparations hold the lane until they end
    WarmWorkerPool pool;
    EvaluationResources resources = poolOnly(pool);
    resources.cpuTimingLane = &cpuLane;
    Evaluator service({}, resources);
    const auto target = EvaluationTarget::forWorkspace(ws.string());
    cacheBaselines(ws, options);
    // The server started, with no standby that the hold could meet.
    EvaluationOptions noStandby = options;
    noStandby.standby = false;
    ASSERT_TRUE(service.evaluate(target, noStandby).correct);

    StandbyHold hold(ws / "hold-standby");
    const EvaluationResult second = service.evaluate(target, options);
    ASSERT_TRUE(second.correct) << describe(second);
    const int servers = pool.workersStarted();
    ASSERT_TRUE(waitFor([&] { return cpuLane.sharedHolds() == 1; }, std::chrono::seconds(10)))
        << "the standby preparation sent at the evaluation's end holds no lane";

    std::stop_source giveUp; // so that a failure here leaves no thread waiting for good
    auto third = std::async(std::launch::async, [&] {
        return service.evaluate(target, options, {}, giveUp.get_token());
    });
    auto timed =
        std::async(std::launch::async, [&] { return cpuLane.acquire(giveUp.get_token()); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(timed.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
        << "a timed stage got the lane beside the preparation";
    EXPECT_EQ(third.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    hold.release();
    if (timed.wait_for(std::chrono::seconds(60)) != std::future_status::ready)
        giveUp.request_stop();
    // Let go at once: the third evaluation's profile needs the lane next.
    ASSERT_TRUE(timed.get().has_value()) << "the preparation never let its lane go";
    if (third.wait_for(std::chrono::seconds(120)) != std::future_status::ready)
        giveUp.request_stop();

    const EvaluationResult r = third.get();
    EXPECT_TRUE(r.correct) << describe(r);
    EXPECT_EQ(pool.workersStarted(), servers) << "a server started beside the preparing one";
    EXPECT_TRUE(preparedAhead(r, "verify")) << describe(r);
    EXPECT_TRUE(preparedAhead(r, "profile")) << describe(r);
    // The evaluation's first warm stage waited for the server: a second of the test's hold.
    const StageRecord* waited = r.stage("inspect");
    ASSERT_NE(waited, nullptr) << describe(r);
    EXPECT_GE(waited->preparationWaitSeconds, 0.5) << describe(r);
    EXPECT_LE(waited->preparationWaitSeconds, waited->startSeconds);
    // Its own standby, made without a hold, lets the lane go too.
    EXPECT_TRUE(waitFor([&] { return cpuLane.sharedHolds() + cpuLane.busyLanes() == 0; },
                        std::chrono::seconds(60)))
        << "a hold was never let go";
    pool.shutdown();
}

// A preparation that does not end would hold its worker and its lane until its timeout; a pool
// that shuts down (its owner's lanes go next) ends it at once.
TEST_F(WarmWorkerTest, ShuttingThePoolDownEndsAStandbyPreparationThatIsNotMade) {
    const fs::path ws = makePythonWorkspace(taskHeldInStandby(), tinyCandidate(kHonestForward));
    EvaluationOptions options = warmOptions();
    // The preparation's bound, short enough that a shutdown that merely outwaited it would show.
    options.stageTimeout = std::chrono::seconds(60);
    GpuLanes cpuLane(1);
    WarmWorkerPool pool;
    EvaluationResources resources = poolOnly(pool);
    resources.cpuTimingLane = &cpuLane;
    Evaluator service({}, resources);
    const auto target = EvaluationTarget::forWorkspace(ws.string());
    StandbyHold hold(ws / "hold-standby");
    const EvaluationResult r = service.evaluate(target, options);
    ASSERT_TRUE(r.correct) << describe(r);
    ASSERT_TRUE(waitFor([&] { return cpuLane.sharedHolds() == 1; }, std::chrono::seconds(10)))
        << "the standby preparation holds no lane";

    const auto asked = std::chrono::steady_clock::now();
    pool.shutdown();
    EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(10));
    EXPECT_EQ(cpuLane.sharedHolds(), 0) << "the preparation's lane outlived the pool";
    EXPECT_EQ(pool.workers(), 0u);
}

} // namespace
} // namespace kwb::test
