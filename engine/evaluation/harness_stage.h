#pragma once

#include "engine/process/process_runner.h"
#include "engine/process/sandbox.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <vector>

namespace kwb {

// One run of the Python harness (`python -m kwb_harness STAGE`) in the sandbox. The request goes
// in as a JSON file, the result comes back as one; everything the process did besides (crash,
// timeout, flood, no result) is turned into a failure kind and a message a user can act on.
struct HarnessStageSpec {
    std::string stage; // inspect, compile, verify, profile, baseline
    nlohmann::json request;
    std::string python;
    std::string scratchDirectory; // writable; holds request.json and result.json
    std::string workingDirectory;
    SandboxPolicy sandbox;
    std::chrono::seconds timeout{300};
    std::map<std::string, std::string> environment;
    // Variables that name this workspace's own folders (the compiler cache's base, the timeline's
    // record file). A cold stage gets them like `environment`; a warm worker's stage child sets
    // them itself, so that they do not decide which server serves the stage.
    std::map<std::string, std::string> workspaceEnvironment;
    // Folders holding many workspaces' files (the workspaces' common parent, the folder of every
    // workspace's runs). A warm worker may bind these instead of this workspace's own folders,
    // so that one server serves every workspace below them; its stage child then confines its
    // writes to this stage's own writable paths (WarmWorkerPlan). Empty: a server of its own.
    std::vector<std::string> sharedRoots;
    // A program the stage's Python runs under, inside the sandbox (its arguments, ending where
    // the Python command begins): Nsight Compute for on-demand counters. Such a stage always runs
    // in a process of its own, never in a warm worker's child.
    std::vector<std::string> wrapper;
    // A stop request ends the running stage (its process tree, or a warm worker's stage child)
    // at once; the outcome's failureKind is "cancelled".
    std::stop_token stop;
    // The stage's GPU lane, taken by whoever runs the stage, returning false when `stop` came
    // first (unset: the stage already holds what it needs). `takeLane` shares it: a warm
    // worker calls it once it has the server (a lane is never held while waiting for a busy
    // server, whose stage may be waiting for that lane). `takeLaneAlone`, for a timing stage,
    // trades the shared hold for the lane alone: a warm worker's stage child asks for it when
    // it reaches its timed calls; a stage run as a process of its own takes it before its
    // process starts. Both may be called again: a hold already taken is kept. Called with a
    // stop already requested, each takes the lane only if it is free at once.
    std::function<bool(std::stop_token)> takeLane;
    std::function<bool(std::stop_token)> takeLaneAlone;
    // Whether those lanes are a GPU's (false: the CPU's turn to time, in CPU mode), for the
    // message of a stage stopped while it waited.
    bool laneOnTheGpu = true;
};

struct HarnessStageOutcome {
    bool ok = false;         // the stage ran and reported ok
    nlohmann::json result;   // the harness's result document (null when it wrote none)
    std::string failureKind; // harness error kind, or timeout / crashed / resource_limit / ...
    std::string failureMessage;
    std::string log; // what the stage printed, truncated
    bool sandboxed = false;
    std::string sandboxDescription; // SandboxedCommand::description
    std::string sandboxWarning;
    double seconds = 0.0;      // StageRecord::seconds
    double startSeconds = 0.0; // StageRecord::startSeconds
    bool workerStarted = false;
    bool preparedAhead = false; // a warm worker's standby child ran it (StageRecord::preparedAhead)
    double laneWaitSeconds = 0.0;        // StageRecord::laneWaitSeconds
    double buildWaitSeconds = 0.0;       // StageRecord::buildWaitSeconds
    double aloneLaneWaitSeconds = 0.0;   // StageRecord::aloneLaneWaitSeconds
    double preparationWaitSeconds = 0.0; // StageRecord::preparationWaitSeconds
    // The engine found the judge (or the warm server above it) stopped by someone and continued
    // it (ProcessResult::ownProcessesStopped): what it found, in words; "" when nothing was.
    std::string judgeStopped;
};

// A stage stopped before it began, while it waited for its GPU lane (or, on the CPU, for its
// turn to time).
HarnessStageOutcome cancelledWaitingForLane(bool onTheGpu);

HarnessStageOutcome runHarnessStage(const HarnessStageSpec& spec);

// The end of a process's output for a message: at most maxChars, from a line's start where one
// falls inside them, with "..." in front when something was cut.
std::string lastLines(const std::string& text, std::size_t maxChars);

// Sets the outcome's seconds (the wall-clock its caller waited) and, from the harness's own
// elapsed_s in the result, how much of it went to starting and ending the stage's process.
void recordStageWallTime(HarnessStageOutcome& outcome, double seconds);

// The sandboxed, isolated `python -I -B -u kwb_stage.py MODULE ARGS...` a stage runs as, for
// pythonArguments `-m MODULE ARGS...`, with the stage's environment on top of the sandbox's
// allow-list and HOME in `writableScratch`, which is added to the writable paths.
SandboxedCommand harnessCommand(const HarnessStageSpec& spec,
                                const std::vector<std::string>& pythonArguments,
                                const std::string& writableScratch);

// Writes spec.request to <scratch>/harness-request.json and removes a stale result; returns the
// (request, result) paths, or an error message in `error`. The scratch folder is writable in the
// sandbox: the request is a fresh file renamed into place, never written through a link left
// there, and interpretStageRun reads the result only when it is a regular file (no link).
bool writeStageRequest(const HarnessStageSpec& spec, std::filesystem::path& requestFile,
                       std::filesystem::path& resultFile, std::string& error);

// Turns how a stage process ended, plus the result file it wrote, into an outcome. Shared by
// the cold path (one process per stage) and the warm worker (one forked child per stage), so
// both report crashes, timeouts and harness errors identically. `outcome` carries what the
// caller already knows (log, sandbox state, seconds).
HarnessStageOutcome interpretStageRun(const HarnessStageSpec& spec, const ProcessResult& process,
                                      const std::filesystem::path& resultFile,
                                      HarnessStageOutcome outcome);

} // namespace kwb
