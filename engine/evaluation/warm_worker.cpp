#include "engine/evaluation/warm_worker.h"

#include "engine/evaluation/json_field.h"
#include "engine/evaluation/warm_worker_plan.h"
#include "engine/process/head_tail_capper.h"
#include "engine/process/line_process.h"
#include "engine/process/tree_watchdog.h"
#include "engine/system/bounded_json.h"
#include "engine/system/user_directories.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kwb {
namespace {

// What one stage may take, watched over the server's whole tree. The process limit is the
// server's to enforce on each stage child (its standby children count against no stage). Disk
// is watched as the file systems' free space, and when that shrinks past the budget, the growth
// of the folders the stage child may write (its confinement: the stage's folders and the
// scratch folders' parent, its HOME and TMPDIR) decides: another writer on the same disk (a
// concurrent evaluation, a training run's checkpoints) is not blamed on this stage.
TreeBudget stageBudget(const HarnessStageSpec& spec, const WarmWorkerPlan& plan) {
    TreeBudget budget = treeBudgetFor(spec.sandbox);
    budget.maxProcesses = 0;
    budget.ownLevels = 2; // the server and its stage children: the judges
    budget.diskPaths.clear();
    for (const auto& path : plan.confinement.value("writable", json::array()))
        if (path.is_string())
            budget.diskPaths.push_back(path.get<std::string>());
    return budget;
}

constexpr auto kStartTimeout = std::chrono::seconds(180);
constexpr auto kReplyGrace = std::chrono::seconds(30);
constexpr std::size_t kLogKeepBytes = 128 * 1024;

// Head and tail of a stage's log file, like the cold path's capped pipe capture.
std::string readCapped(const fs::path& path) {
    return capFileHeadTail(path.string(), kLogKeepBytes).text;
}

std::string keyFor(const SandboxedCommand& command) {
    json key = {{"argv", command.spec.argv},
                {"cwd", command.spec.workingDirectory},
                {"env", command.spec.environmentOverrides},
                {"limits",
                 {command.spec.limits.cpuSeconds, command.spec.limits.addressSpaceBytes,
                  command.spec.limits.maxProcesses, command.spec.limits.openFiles,
                  command.spec.limits.fileSizeBytes}}};
    return key.dump();
}

// Where a warm stage's time went outside the stage process (the record's start_seconds): the
// engine's side (the server and lane taken, the request written; the result read) and the
// server's (preparing the inputs, the child from its start to its "result written").
std::string accountingLine(const json& reply, std::chrono::steady_clock::duration beforeSending,
                           std::chrono::steady_clock::duration sentToReply,
                           std::chrono::steady_clock::duration readingResult) {
    const auto seconds = [](std::chrono::steady_clock::duration d) {
        return std::chrono::duration<double>(d).count();
    };
    char line[320];
    std::snprintf(line, sizeof line,
                  "warm worker: %.3fs before the request (server, lane, request file), %.3fs "
                  "to the reply (the server's input warm-up %.3fs, the child %.3fs), %.3fs "
                  "reading the result\n",
                  seconds(beforeSending), seconds(sentToReply),
                  jsonField<double>(reply, "warm_s", 0.0), jsonField<double>(reply, "seconds", 0.0),
                  seconds(readingResult));
    return line;
}

} // namespace

struct WarmWorkerPool::Worker {
    std::string key;
    LineProcess process;
    std::mutex busy; // one stage at a time per worker
    bool sandboxed = false;
    std::string sandboxWarning;
    long long nextId = 1;
    std::size_t maxDescendants = 0; // the cold path's process limit, enforced by the server
    std::string sandboxDescription;
    bool broken = false;
    bool shared = false;       // serves every workspace below the stage's shared roots
    std::string lastWorkspace; // whose stages it ran last (its standby children are theirs)
    // Under the pool's mutex_: `busy` is held by a standby preparation (prepareStandby), not by
    // a stage.
    bool preparing = false;
};

// The server's reply, read in short waits so that `watchdog` can watch the server's tree (the
// stage child and everything it started) against the stage's budget meanwhile, and keep the
// judge running; nullopt on timeout, end of output, or an exceeded budget (then `limitExceeded`
// says which). A stop request is passed on to the server as {"cancel": id} on the channel, which
// only the engine writes; the server kills the stage child and replies "cancelled" (`cancelSent`
// says the engine asked). A server that does not within a few seconds is ended
// (`cancelledHard`).
//
// A timing stage's child that reaches its timed calls asks for its GPU's lane alone with a line
// {"id", "lane": "timed"} before the reply: `takeLaneAlone` is called on a thread of its own
// (the tree is still watched while it waits) and the grant goes back as {"lane_granted": id}.
// The wait is not the stage's: the server does not count it against the stage's timeout, nor
// does the deadline here.
std::optional<std::string>
WarmWorkerPool::awaitReply(Worker& worker, long long id, std::chrono::milliseconds timeout,
                           TreeWatchdog& watchdog, std::string& limitExceeded, std::stop_token stop,
                           bool& cancelSent, bool& cancelledHard,
                           const std::function<bool(std::stop_token)>& takeLaneAlone) {
    std::optional<std::chrono::steady_clock::time_point> cancelDeadline;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    enum class Lane { NotAsked, Waiting, Taken, Granted, Refused };
    std::atomic<Lane> lane{Lane::NotAsked};
    std::chrono::steady_clock::time_point laneAsked;
    std::optional<std::jthread> laneTaker; // after `lane`: joined before it goes
    while (true) {
        if (lane == Lane::Taken) {
            worker.process.writeLine(json{{"lane_granted", id}}.dump());
            deadline += std::chrono::steady_clock::now() - laneAsked;
            lane = Lane::Granted;
        }
        const bool laneWaiting = lane == Lane::Waiting;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 && !laneWaiting)
            return std::nullopt;
        auto line =
            worker.process.readLine(laneWaiting ? std::chrono::milliseconds(50)
                                                : std::clamp(left, std::chrono::milliseconds(1),
                                                             std::chrono::milliseconds(50)));
        if (line) {
            const json message = parseBoundedJson(*line);
            if (message.is_object() && message.contains("lane") &&
                integerOr(message, "id", -1) == static_cast<std::int64_t>(id)) {
                if (lane == Lane::NotAsked) {
                    laneAsked = std::chrono::steady_clock::now();
                    if (!takeLaneAlone) {
                        lane = Lane::Taken; // nothing to trade: the stage holds what it needs
                        continue;
                    }
                    // Free now (the instant loop's case): granted without a thread, which the
                    // loop below would notice only after its next read's timeout.
                    std::stop_source atOnce;
                    atOnce.request_stop();
                    if (takeLaneAlone(atOnce.get_token())) {
                        lane = Lane::Taken;
                        continue;
                    }
                    lane = Lane::Waiting;
                    laneTaker.emplace([&lane, &takeLaneAlone, stop](std::stop_token own) {
                        std::stop_source either;
                        std::stop_callback byCaller(stop, [&] { either.request_stop(); });
                        std::stop_callback byUs(own, [&] { either.request_stop(); });
                        lane = takeLaneAlone(either.get_token()) ? Lane::Taken : Lane::Refused;
                    });
                }
                continue; // a second ask is not answered twice
            }
        }
        if (line || worker.process.ended())
            return line;
        if (stop.stop_requested() && !cancelDeadline) {
            cancelDeadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            cancelSent = worker.process.writeLine(nlohmann::json{{"cancel", id}}.dump());
        }
        if (cancelDeadline && std::chrono::steady_clock::now() > *cancelDeadline) {
            cancelledHard = true;
            watchdog.killAll();
            return std::nullopt;
        }
        limitExceeded = watchdog.check();
        if (!limitExceeded.empty()) {
            // Ended here, while the server (the root) is alive and nothing has been reparented
            // away: also what left the stage's process group.
            watchdog.killAll();
            return std::nullopt;
        }
    }
}

WarmWorkerPool::WarmWorkerPool(std::size_t capacity)
    : capacity_(std::max<std::size_t>(1, capacity)) {}

WarmWorkerPool::~WarmWorkerPool() {
    shutdown();
}

WarmWorkerPool& WarmWorkerPool::shared() {
    static WarmWorkerPool pool;
    return pool;
}

void WarmWorkerPool::shutdown() {
    // First: a preparation holds a worker's busy lock, and a lane of the pool's owner that may
    // be gone once this returns.
    endPreparations();
    std::vector<std::shared_ptr<Worker>> workers;
    {
        std::lock_guard lock(mutex_);
        workers.swap(workers_);
    }
    for (auto& worker : workers) {
        std::lock_guard busy(worker->busy);
        worker->process.kill();
    }
}

void WarmWorkerPool::endPreparations() {
    std::vector<Preparation> preparations;
    {
        std::lock_guard lock(preparationsMutex_);
        preparations.swap(preparations_);
    }
    for (Preparation& preparation : preparations)
        preparation.thread.request_stop();
    preparations.clear(); // joins
}

std::size_t WarmWorkerPool::workers() const {
    std::lock_guard lock(mutex_);
    return workers_.size();
}

int WarmWorkerPool::workersStarted() const {
    std::lock_guard lock(mutex_);
    return started_;
}

WarmWorkerPool::Lease WarmWorkerPool::workerFor(const WarmWorkerPlan& plan,
                                                const std::string& workspace, std::string& error,
                                                bool& started, double& preparationWait,
                                                std::stop_token stop) {
    const SandboxedCommand& command = plan.server;
    const std::string key = keyFor(command);
    std::shared_ptr<Worker> evicted;
    std::shared_ptr<Worker> busiest; // a matching server to wait for when no other may start
    {
        std::unique_lock lock(mutex_);
        std::size_t matching = 0;
        while (true) {
            std::erase_if(workers_, [&](const std::shared_ptr<Worker>& w) {
                return w->key == key && (w->broken || !w->process.running());
            });
            // An idle server that last served this workspace (its standby children may fit the
            // request), else one that prepares them now, else any idle one; a server serving
            // another evaluation is left to it.
            matching = 0;
            busiest.reset();
            std::shared_ptr<Worker> preparing;
            for (const bool sameWorkspace : {true, false}) {
                if (preparing)
                    break;
                for (auto it = workers_.rbegin(); it != workers_.rend(); ++it) {
                    const std::shared_ptr<Worker> candidate = *it;
                    if (candidate->key != key)
                        continue;
                    if (sameWorkspace)
                        ++matching;
                    if (sameWorkspace && candidate->lastWorkspace != workspace)
                        continue;
                    std::unique_lock busy(candidate->busy, std::try_to_lock);
                    if (!busy.owns_lock()) {
                        if (sameWorkspace && candidate->preparing && !preparing)
                            preparing = candidate;
                        busiest = busiest ? busiest : candidate;
                        continue;
                    }
                    candidate->lastWorkspace = workspace;
                    workers_.erase(std::next(it).base());
                    workers_.push_back(candidate); // most recently used last
                    return {candidate, std::move(busy)};
                }
            }
            if (!preparing)
                break;
            // Its standby children are this request's stages, made ready: another server would
            // start (the torch import) only to make them again. The wait is the preparation's,
            // as a request that reaches a child still preparing waits for it (standby.py).
            const auto asked = std::chrono::steady_clock::now();
            const bool ended =
                preparationEnded_.wait(lock, stop, [&] { return !preparing->preparing; });
            preparationWait +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
            if (!ended) {
                error = "cancelled";
                return {};
            }
        }
        // Every matching server is busy: evaluations of other workspaces run beside it in a
        // server of their own, up to the pool's capacity.
        if (busiest && matching >= capacity_)
            busiest->lastWorkspace = workspace;
        else
            busiest.reset();
    }
    if (busiest) // waited for outside the pool's lock
        return {busiest, std::unique_lock(busiest->busy)};
    auto worker = std::make_shared<Worker>();
    std::unique_lock busy(worker->busy); // ours until the stage is done
    worker->key = key;
    worker->lastWorkspace = workspace;
    worker->shared = plan.shared;
    worker->sandboxed = command.isolated;
    worker->sandboxWarning = command.warning;
    worker->maxDescendants = command.spec.treeBudget.maxProcesses;
    worker->sandboxDescription = command.description;
    const fs::path logDirectory = fs::path(cacheDirectory()) / "workers";
    std::error_code ec;
    fs::create_directories(logDirectory, ec);
    // One log per server: several may serve the same key at once.
    static std::atomic<unsigned> serial{0};
    const fs::path serverLog =
        logDirectory / ("server-" + std::to_string(std::hash<std::string>{}(key)) + "-" +
                        std::to_string(getpid()) + "-" + std::to_string(serial++) + ".log");
    started = true;
    if (!worker->process.start(command.spec, serverLog.string(), &error))
        return {};
    // The start (the torch import, seconds) is waited for in short slices, so that a cancelled
    // evaluation does not sit it out.
    std::optional<std::string> ready;
    const auto startDeadline = std::chrono::steady_clock::now() + kStartTimeout;
    while (!ready && !worker->process.ended() && std::chrono::steady_clock::now() < startDeadline) {
        if (stop.stop_requested()) {
            worker->process.kill();
            error = "cancelled";
            return {};
        }
        ready = worker->process.readLine(std::chrono::milliseconds(100));
    }
    json hello = ready ? parseBoundedJson(*ready) : json();
    if (!hello.is_object() || !hello.value("ready", false)) {
        error = "the warm worker did not start: " + readCapped(serverLog);
        worker->process.kill();
        return {};
    }
    {
        std::lock_guard lock(mutex_);
        ++started_;
        workers_.push_back(worker);
        if (workers_.size() > capacity_) {
            evicted = workers_.front();
            workers_.erase(workers_.begin());
        }
    }
    if (evicted) {
        std::lock_guard evictedBusy(evicted->busy);
        evicted->process.kill();
    }
    return {worker, std::move(busy)};
}

void WarmWorkerPool::standBy(const HarnessStageSpec& spec, SharedLaneTaker takeSharedLane) {
    const std::string key = keyFor(planWarmWorker(spec).server);
    std::shared_ptr<Worker> worker;
    {
        // The server that served this workspace last: what it prepares is that evaluation's.
        std::lock_guard lock(mutex_);
        for (const auto& candidate : workers_)
            if (candidate->key == key && !candidate->broken &&
                candidate->lastWorkspace == spec.workingDirectory)
                worker = candidate;
    }
    if (!worker)
        return;
    if (takeSharedLane) {
        // On a thread of the pool, never of the worker: the last holder of a worker must not be
        // a thread that would then destroy itself.
        std::lock_guard lock(preparationsMutex_);
        std::erase_if(preparations_, [](const Preparation& p) { return p.finished->load(); });
        auto finished = std::make_shared<std::atomic<bool>>(false);
        auto prepare = [this, worker, finished, takeSharedLane = std::move(takeSharedLane),
                        timeout = spec.timeout](std::stop_token stop) {
            prepareStandby(worker, takeSharedLane, timeout, stop);
            *finished = true;
        };
        preparations_.push_back({finished, std::jthread(std::move(prepare))});
        return;
    }
    std::unique_lock busy(worker->busy, std::try_to_lock);
    if (!busy.owns_lock() || !worker->process.running())
        return;
    // No reply: the server forks the standby children and goes back to reading requests.
    if (!worker->process.writeLine(json{{"standby", true}}.dump()))
        worker->broken = true;
}

// The worker first, then the lane, as a stage takes them (runOnWorker): a thread that held the
// lane while it waited for the worker could keep the worker's own stage from trading up to the
// lane alone. The lane is let go once the server replied that no standby child prepares any
// more (fork_server.py kills those still preparing at the timeout), or once the server is
// killed: never while a child may still be using the device.
void WarmWorkerPool::prepareStandby(const std::shared_ptr<Worker>& worker,
                                    const SharedLaneTaker& takeSharedLane,
                                    std::chrono::seconds timeout, std::stop_token stop) {
    {
        // `busy` and `preparing` change together under the pool's lock: workerFor tells a
        // worker that prepares from one that runs a stage.
        std::lock_guard lock(mutex_);
        if (!worker->busy.try_lock())
            return; // another evaluation took it first and stands by itself when it ends
        worker->preparing = true;
    }
    std::unique_lock busy(worker->busy, std::adopt_lock);
    if (worker->process.running()) {
        const std::optional<GpuLanes::Hold> lane = takeSharedLane(stop);
        const long long id = worker->nextId++;
        const json message = {{"standby", true}, {"id", id}, {"timeout_s", timeout.count()}};
        bool replied = false;
        if (lane && worker->process.writeLine(message.dump())) {
            const auto deadline = std::chrono::steady_clock::now() + timeout + kReplyGrace;
            while (!replied && !stop.stop_requested() && !worker->process.ended() &&
                   std::chrono::steady_clock::now() < deadline) {
                const std::optional<std::string> line =
                    worker->process.readLine(std::chrono::milliseconds(50));
                const json reply = line ? parseBoundedJson(*line) : json();
                replied = reply.is_object() && reply.contains("prepared") &&
                          integerOr(reply, "id", -1) == static_cast<std::int64_t>(id);
            }
        }
        if (lane && !replied) {
            // A stop (the pool ends), a server that did not answer in time: its children may
            // still be preparing, and its reply, read later, would be taken for a stage's.
            worker->broken = true;
            worker->process.kill();
        }
    }
    {
        std::lock_guard lock(mutex_);
        worker->preparing = false;
        busy.unlock();
    }
    preparationEnded_.notify_all();
}

HarnessStageOutcome WarmWorkerPool::run(const HarnessStageSpec& spec) {
    const auto begun = std::chrono::steady_clock::now();
    bool workerStarted = false;
    double preparationWait = 0.0;
    HarnessStageOutcome outcome = runOnWorker(spec, workerStarted, preparationWait);
    // What the caller waited for, all of it: a server's start, the wait for a busy worker, a
    // cold rerun after a failed one. The stage's time in its process is the rest.
    recordStageWallTime(
        outcome, std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count());
    // The child's wait for its preparation (recordStageWallTime) and the wait for the server
    // that prepared it are one wait, spent on either side.
    outcome.preparationWaitSeconds =
        std::min(outcome.preparationWaitSeconds + preparationWait, outcome.startSeconds);
    outcome.workerStarted = workerStarted;
    return outcome;
}

HarnessStageOutcome WarmWorkerPool::runOnWorker(const HarnessStageSpec& spec, bool& workerStarted,
                                                double& preparationWait) {
    std::string error;
    const auto begun = std::chrono::steady_clock::now();
    const WarmWorkerPlan plan = planWarmWorker(spec);
    Lease lease =
        workerFor(plan, spec.workingDirectory, error, workerStarted, preparationWait, spec.stop);
    if (!lease.worker && spec.stop.stop_requested()) {
        HarnessStageOutcome cancelled;
        cancelled.failureKind = "cancelled";
        cancelled.failureMessage = workerStarted ? "cancelled while its warm worker started"
                                                 : "cancelled while its warm worker prepared";
        return cancelled;
    }
    if (!lease.worker)
        return runHarnessStage(spec); // reports the real problem (no torch, no Python, ...)
    const std::shared_ptr<Worker> worker = lease.worker;
    std::unique_lock busy = std::move(lease.busy);
    // The lane after the server: a stage waiting for a busy server holds no lane that the
    // server's own stage may be waiting for.
    if (spec.takeLane && !spec.takeLane(spec.stop))
        return cancelledWaitingForLane(spec.laneOnTheGpu);

    HarnessStageOutcome outcome;
    fs::path requestFile, resultFile;
    if (!writeStageRequest(spec, requestFile, resultFile, outcome.failureMessage)) {
        outcome.failureKind = "internal";
        return outcome;
    }
    // A cold stage's sandbox creates the folders it binds writable; a shared server's child
    // may only write inside folders that exist when it confines itself (a pair's first
    // load_inline build folder, say), and could not create them then.
    if (plan.shared)
        for (const auto& path : plan.confinement.value("writable", json::array()))
            if (path.is_string()) {
                std::error_code ec;
                fs::create_directories(path.get<std::string>(), ec);
            }
    const fs::path logFile = fs::path(spec.scratchDirectory) / "harness-log.txt";
    outcome.sandboxed = worker->sandboxed;
    outcome.sandboxWarning = worker->sandboxWarning;
    outcome.sandboxDescription = worker->sandboxDescription;

    const long long id = worker->nextId++;
    const json message = {{"id", id},
                          {"stage", spec.stage},
                          {"request", requestFile.string()},
                          {"result", resultFile.string()},
                          {"log", logFile.string()},
                          {"timeout_s", spec.timeout.count()},
                          {"max_descendants", worker->maxDescendants},
                          {"confine", plan.confinement}};
    const auto sent = std::chrono::steady_clock::now();
    std::optional<std::string> line;
    std::string limitExceeded;
    bool cancelSent = false, cancelledHard = false;
    TreeWatchdog watchdog(worker->process.pid(), stageBudget(spec, plan));
    if (worker->process.writeLine(message.dump()))
        line = awaitReply(*worker, id, spec.timeout + kReplyGrace, watchdog, limitExceeded,
                          spec.stop, cancelSent, cancelledHard, spec.takeLaneAlone);
    // What the watch found of the judge's stops, whichever way the wait ended.
    const std::string judgeStopped = watchdog.judgeKeeper().finding();
    if (cancelledHard || !limitExceeded.empty()) {
        // The stage's tree took more memory or disk than an evaluation may, or the server did
        // not answer a cancel: the server, whose tree the stage is part of, goes with it (the
        // next stage starts a fresh one), and the stage ends as over budget or cancelled.
        worker->broken = true;
        worker->process.kill();
        ProcessResult killed;
        killed.started = true;
        killed.cancelled = cancelledHard;
        killed.limitExceeded = limitExceeded;
        killed.ownProcessesStopped = judgeStopped;
        killed.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - sent);
        killed.err.text = readCapped(logFile);
        outcome.log = killed.err.text;
        return interpretStageRun(spec, killed, resultFile, std::move(outcome));
    }
    json reply = line ? parseBoundedJson(*line) : json();
    if (!reply.is_object() || integerOr(reply, "id", -1) != static_cast<std::int64_t>(id)) {
        // The server itself failed (it never runs candidate code, so this is not the
        // candidate's doing): drop it and give the stage a cold run instead.
        worker->broken = true;
        worker->process.kill();
        busy.unlock();
        return runHarnessStage(spec);
    }

    ProcessResult process;
    process.started = true;
    process.ownProcessesStopped = judgeStopped;
    const std::string status = reply.value("status", std::string());
    if (status == "exited") {
        process.exitedNormally = true;
        process.exitCode = intOr(reply, "code", -1);
    } else if (status == "signaled") {
        process.terminatingSignal = intOr(reply, "signal", 0);
    } else if (status == "timeout") {
        process.timedOut = true;
    } else if (status == "limit") {
        process.limitExceeded = reply.value("limit", std::string("process limit"));
    } else if (status == "cancelled" && cancelSent) {
        process.cancelled = true;
    } else if (status == "cancelled") {
        // Only the engine can cancel; a server that says so unasked is not to be believed.
        worker->broken = true;
        process.exitedNormally = true;
        process.exitCode = 3;
    }
    process.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - sent);
    process.err.text = readCapped(logFile);
    outcome.log = process.err.text;
    outcome.preparedAhead = boolOr(reply, "standby", false);
    if (reply.value("fatal", std::string()).size())
        worker->broken = true;
    const auto replied = std::chrono::steady_clock::now();
    outcome = interpretStageRun(spec, process, resultFile, std::move(outcome));
    outcome.log += accountingLine(reply, sent - begun, replied - sent,
                                  std::chrono::steady_clock::now() - replied);
    return outcome;
}

} // namespace kwb
