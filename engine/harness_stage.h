#pragma once

#include "engine/process_runner.h"
#include "engine/sandbox.h"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

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
};

struct HarnessStageOutcome {
    bool ok = false;         // the stage ran and reported ok
    nlohmann::json result;   // the harness's result document (null when it wrote none)
    std::string failureKind; // harness error kind, or timeout / crashed / resource_limit / ...
    std::string failureMessage;
    std::string log; // what the stage printed, truncated
    bool sandboxed = false;
    std::string sandboxWarning;
    double seconds = 0.0;
};

HarnessStageOutcome runHarnessStage(const HarnessStageSpec& spec);

} // namespace kwb
