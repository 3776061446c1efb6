#pragma once

#include "engine/process/environment.h"
#include "engine/process/process_spawn.h"
#include "engine/process/process_table.h"
#include "engine/process/resource_limits.h"
#include "engine/process/tree_budget.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace kwb {

// Output kept from one stream of a child process, capped by HeadTailCapper (head and tail kept,
// the middle of a flood dropped and counted).
struct CapturedOutput {
    std::string text;
    std::size_t totalBytes = 0;
    bool truncated = false;
};

struct ProcessSpec {
    std::vector<std::string> argv; // argv[0] is resolved through PATH when it has no '/'
    std::string workingDirectory;  // empty: inherit
    std::map<std::string, std::string> environmentOverrides;
    std::optional<std::chrono::milliseconds> timeout;
    std::size_t outputLimitBytes = 256 * 1024; // per stream
    std::string stdinText;                     // written to the child's stdin, then closed
    ResourceLimits limits;
    // What the child and everything it starts may use together (processes, memory, disk),
    // watched every 20 ms; exceeding it kills the whole tree. Unlike RLIMIT_NPROC it also holds
    // for root and for children that left the process group.
    TreeBudget treeBudget;
    // A stop request kills the process group within about 20 ms (the result says `cancelled`),
    // so a stale compile gives way to the newest one.
    std::stop_token stop{};
    // False: the child's environment is environmentOverrides alone (sandboxes build it from
    // sandboxEnvironment()'s allow-list); true: kwb's environment with the overrides applied.
    bool inheritEnvironment = true;
};

struct ProcessResult {
    bool started = false;
    std::string startError; // why the process could not be started
    int exitCode = -1;      // valid when exitedNormally
    bool exitedNormally = false;
    int terminatingSignal = 0;
    bool timedOut = false;
    bool cancelled = false; // killed because spec.stop was requested
    // "process limit (N)", "memory limit (...)", "disk limit (...)" when the watchdog killed
    // the tree.
    std::string limitExceeded;
    // JudgeKeeper::finding(): kwb's own processes at the top of the tree (TreeBudget::ownLevels)
    // found stopped and continued; "" when none was.
    std::string ownProcessesStopped;
    CapturedOutput out;
    CapturedOutput err;
    std::chrono::milliseconds elapsed{0};

    bool succeeded() const {
        return started && exitedNormally && exitCode == 0 && !timedOut && !cancelled;
    }
    // One line a user can act on: "exit code 2", "killed by signal 11 (SIGSEGV)", "timed out".
    std::string statusText() const;
};

// Runs a child in its own process group, so a timeout kills everything it spawned, and never
// lets it block on a full pipe or an inherited stdin. When it ends, every process seen in its
// tree is killed too, also those that left the group: nothing it started outlives it.
ProcessResult runProcess(const ProcessSpec& spec);

// How `spec`'s child starts (argv, folder, the merged environment, limits); the caller adds
// the descriptors.
SpawnSpec spawnSpecFor(const ProcessSpec& spec);

} // namespace kwb
