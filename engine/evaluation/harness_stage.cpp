#include "engine/evaluation/harness_stage.h"

#include "engine/evaluation/json_field.h"
#include "engine/system/bounded_json.h"
#include "engine/system/resource_paths.h"
#include "engine/workspace/contained_files.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

namespace fs = std::filesystem;

namespace kwb {
namespace {

// The scratch folder is writable in the sandbox (the candidate's HOME; a warm worker's server
// even writes its parent, where it could swap the folder for a link). Its files are reached from
// the folder's parent, through real folders only, and never through a link the candidate left.
struct ScratchFile {
    fs::path anchor;      // the scratch folder's parent, kwb's own
    std::string relative; // "<scratch folder>/<file>"
};

ScratchFile scratchFile(const fs::path& file) {
    const fs::path path = fs::absolute(file).lexically_normal();
    const fs::path folder = path.parent_path();
    return {folder.parent_path(), (folder.filename() / path.filename()).string()};
}

nlohmann::json readStageResult(const fs::path& resultFile) {
    const ScratchFile result = scratchFile(resultFile);
    // A link, a FIFO or a device in the result's place reads as no result at all.
    const std::optional<std::string> text =
        readFileInside(result.anchor, result.relative, JsonLimits{}.maxBytes);
    if (!text)
        return nullptr;
    nlohmann::json parsed = parseBoundedJson(*text);
    return parsed.is_discarded() ? nlohmann::json() : parsed;
}

// Stages that run no candidate code: inspect imports the reference task and only reads the
// candidate's sources; baseline times the reference alone. When such a stage crashes (killed by
// a signal, or a result kwb does not trust), nothing the candidate wrote did it: the machine's
// OOM killer, an operator's kill or a broken interpreter did, so it is the evaluator's failure
// and never scores the candidate.
//
// Stages that run candidate code keep a crash as the candidate's, SIGKILL included: a candidate
// can SIGKILL its own process, and from outside that looks exactly like the OOM killer or an
// operator. Calling those infrastructure would let a failing candidate turn its -1 into "not
// scored" by killing itself, so the conservative reading stays. (Limits kwb enforces, the memory
// budget and the timeout, are reported before this as resource_limit and timeout.)
bool runsCandidateCode(const std::string& stage) {
    return stage != "inspect" && stage != "baseline";
}

// A crash of a stage that runs no candidate code becomes the evaluator's failure.
HarnessStageOutcome crashed(const HarnessStageSpec& spec, HarnessStageOutcome outcome,
                            std::string message) {
    if (runsCandidateCode(spec.stage)) {
        outcome.failureKind = "crashed";
        outcome.failureMessage = std::move(message);
    } else {
        outcome.failureKind = "harness_failed";
        outcome.failureMessage = std::move(message) +
                                 " (the stage runs no candidate code: the evaluator failed, not "
                                 "the candidate)";
    }
    return outcome;
}

} // namespace

std::string lastLines(const std::string& text, std::size_t maxChars) {
    if (text.size() <= maxChars)
        return text;
    auto start = text.find('\n', text.size() - maxChars);
    return "..." + text.substr(start == std::string::npos ? text.size() - maxChars : start);
}

HarnessStageOutcome interpretStageRun(const HarnessStageSpec& spec, const ProcessResult& process,
                                      const std::filesystem::path& resultFile,
                                      HarnessStageOutcome outcome) {
    outcome.result = readStageResult(resultFile);
    outcome.judgeStopped = process.ownProcessesStopped;

    if (!process.started) {
        outcome.failureKind = "python_missing";
        outcome.failureMessage = "cannot run the task Python: " + process.startError;
        return outcome;
    }
    if (process.cancelled) {
        outcome.failureKind = "cancelled";
        outcome.failureMessage =
            spec.stage + " was cancelled while it ran; its processes were killed";
        return outcome;
    }
    if (process.timedOut) {
        outcome.failureKind = "timeout";
        outcome.failureMessage = spec.stage + " did not finish within " +
                                 std::to_string(spec.timeout.count()) +
                                 " s; its processes were killed";
        return outcome;
    }
    if (!process.limitExceeded.empty()) {
        outcome.failureKind = "resource_limit";
        outcome.failureMessage = spec.stage + " was killed: " + process.limitExceeded + " exceeded";
        return outcome;
    }
    // bubblewrap reports a child killed by signal N as exit code 128 + N.
    int deathSignal = process.exitedNormally ? 0 : process.terminatingSignal;
    if (outcome.sandboxed && process.exitedNormally && process.exitCode > 128 &&
        process.exitCode < 128 + 65)
        deathSignal = process.exitCode - 128;
    if (deathSignal != 0) {
        const char* name = sigabbrev_np(deathSignal);
        std::string message = spec.stage + " crashed (killed by signal " +
                              std::to_string(deathSignal) +
                              (name ? std::string(", SIG") + name : std::string()) + ")";
        if (!process.err.text.empty())
            message += ": " + lastLines(process.err.text, 400);
        return crashed(spec, std::move(outcome), std::move(message));
    }
    // The judge exits 0 exactly when it wrote its result. Anything else means the result file,
    // if there is one, is not the judge's: a candidate may have written it and then killed the
    // stage (bubblewrap turns a kill into exit code 128 + N, which would look normal).
    if (outcome.result.is_object() && process.exitedNormally && process.exitCode != 0) {
        std::string message = spec.stage + " ended with exit code " +
                              std::to_string(process.exitCode) +
                              " after a result file appeared; the result is not trusted";
        if (!process.err.text.empty())
            message += ": " + lastLines(process.err.text, 400);
        return crashed(spec, std::move(outcome), std::move(message));
    }
    if (!outcome.result.is_object()) {
        const bool noTorch = process.err.text.find("No module named 'torch'") != std::string::npos;
        outcome.failureKind = noTorch ? "python_missing" : "harness_failed";
        outcome.failureMessage =
            noTorch ? "the task Python cannot import torch"
                    : spec.stage + " wrote no result (" + process.statusText() + ")";
        if (!noTorch && !process.err.text.empty())
            outcome.failureMessage += ": " + lastLines(process.err.text, 600);
        return outcome;
    }
    if (outcome.result.contains("log") && outcome.result["log"].is_string() &&
        !outcome.result["log"].get<std::string>().empty())
        outcome.log = outcome.result["log"].get<std::string>();
    outcome.ok = boolOr(outcome.result, "ok", false);
    if (!outcome.ok) {
        const auto found = outcome.result.find("error");
        const nlohmann::json error = found != outcome.result.end() ? *found : nlohmann::json();
        outcome.failureKind = stringOr(error, "kind", "internal");
        outcome.failureMessage = stringOr(error, "message", "");
        if (outcome.failureKind == "internal" &&
            outcome.failureMessage.find("No module named 'torch'") != std::string::npos) {
            outcome.failureKind = "python_missing";
            outcome.failureMessage = "the task Python " + spec.python + " cannot import torch";
        }
    }
    return outcome;
}

void recordStageWallTime(HarnessStageOutcome& outcome, double seconds) {
    outcome.seconds = seconds;
    // The harness reports its own time in the stage process; the rest of the wall-clock the
    // engine saw went to starting and ending that process (or a warm worker's server).
    const double inside = jsonField<double>(outcome.result, "elapsed_s", -1.0);
    outcome.startSeconds = inside >= 0.0 && inside <= seconds ? seconds - inside : 0.0;
    // Of that, a warm worker's standby child still making its preparation when the request came
    // (the child reports it: standby.py).
    const double waited = jsonField<double>(
        jsonField<nlohmann::json>(outcome.result, "prepared", nlohmann::json::object()),
        "request_waited_seconds", 0.0);
    outcome.preparationWaitSeconds = std::clamp(waited, 0.0, outcome.startSeconds);
}

bool writeStageRequest(const HarnessStageSpec& spec, fs::path& requestFile, fs::path& resultFile,
                       std::string& error) {
    std::error_code ec;
    fs::create_directories(spec.scratchDirectory, ec);
    // Names that do not say which stage runs: the candidate's process can list the scratch
    // folder, and what it is being asked to do must not be visible there (the stage is inside
    // the request, which the harness deletes once it has read it).
    const fs::path scratch = fs::absolute(spec.scratchDirectory).lexically_normal() / "";
    requestFile = scratch.parent_path() / "harness-request.json";
    resultFile = scratch.parent_path() / "harness-result.json";
    const ScratchFile request = scratchFile(requestFile), result = scratchFile(resultFile);
    removeFileInside(result.anchor, result.relative);
    // The candidate of an earlier stage may have left a link in the request's place: the
    // request goes to a fresh file renamed over the name, never through what stands there.
    std::string why;
    if (!writeFileInside(request.anchor, request.relative, spec.request.dump(2), &why, 0644)) {
        error = "cannot write " + requestFile.string() + ": " + why;
        return false;
    }
    return true;
}

SandboxedCommand harnessCommand(const HarnessStageSpec& spec,
                                const std::vector<std::string>& pythonArguments,
                                const std::string& writableScratch) {
    SandboxPolicy policy = spec.sandbox;
    policy.writablePaths.push_back(writableScratch);
    // An isolated interpreter (-I: no working directory, PYTHONPATH or user site on sys.path;
    // -B and -u stand in for the PYTHON* variables -I ignores), started through kwb_stage.py,
    // which puts the trusted harness first: nothing in the workspace can shadow a module the
    // harness imports. `-m MODULE` in pythonArguments becomes the bootstrap's MODULE.
    const std::string bootstrap = (fs::path(harnessDirectory()) / "kwb_stage.py").string();
    std::vector<std::string> argv = spec.wrapper;
    argv.insert(argv.end(), {spec.python, "-I", "-B", "-u", bootstrap});
    for (std::size_t i = 0; i < pythonArguments.size(); ++i)
        if (!(i == 0 && pythonArguments[i] == "-m"))
            argv.push_back(pythonArguments[i]);
    SandboxedCommand command = sandboxCommand(argv, spec.workingDirectory, policy);
    // The stage's process is the judge; under a profiler, the profiler's child is.
    command.spec.treeBudget.ownLevels = spec.wrapper.empty() ? 1 : 2;
    command.spec.timeout = spec.timeout;
    command.spec.outputLimitBytes = 128 * 1024;
    for (const auto& [name, value] : spec.environment)
        command.spec.environmentOverrides[name] = value;
    // HOME is the stage's own scratch folder: the user's home (keys, configs, sockets) is no
    // business of candidate code, and libraries that write below HOME get a writable place.
    command.spec.environmentOverrides["HOME"] = writableScratch;
    command.spec.environmentOverrides["PYTHONPATH"] = harnessDirectory();
    command.spec.environmentOverrides["PYTHONDONTWRITEBYTECODE"] = "1";
    // Every Python the stage starts (torch.compile's workers, a build's helpers) leaves the
    // working directory off sys.path too, as -I does for the stage itself.
    command.spec.environmentOverrides["PYTHONSAFEPATH"] = "1";
    command.spec.environmentOverrides["PYTHONUNBUFFERED"] = "1";
    // The interpreter's own folder first, as activating its environment would: tools installed
    // beside it (pip's ninja, which torch's extension builds need) are found without the user
    // activating the venv. A venv's python is a link; its folder, not its target's, is meant.
    const fs::path interpreter(spec.python);
    if (interpreter.is_absolute() && interpreter.has_parent_path()) {
        std::string& path = command.spec.environmentOverrides["PATH"];
        path = interpreter.parent_path().string() + (path.empty() ? "" : ":" + path);
    }
    return command;
}

HarnessStageOutcome cancelledWaitingForLane(bool onTheGpu) {
    HarnessStageOutcome stopped;
    stopped.failureKind = "cancelled";
    stopped.failureMessage = onTheGpu ? "cancelled while waiting for a GPU lane"
                                      : "cancelled while waiting to time on the CPU";
    return stopped;
}

HarnessStageOutcome runHarnessStage(const HarnessStageSpec& spec) {
    HarnessStageOutcome outcome;
    // A process of its own cannot ask for the lane when it reaches its timed calls: it times
    // with the lane alone from its start.
    if (spec.takeLaneAlone ? !spec.takeLaneAlone(spec.stop)
                           : spec.takeLane && !spec.takeLane(spec.stop)) {
        return cancelledWaitingForLane(spec.laneOnTheGpu);
    }
    fs::path requestFile, resultFile;
    if (!writeStageRequest(spec, requestFile, resultFile, outcome.failureMessage)) {
        outcome.failureKind = "internal";
        return outcome;
    }

    SandboxedCommand command = harnessCommand(
        spec,
        {"-m", "kwb_harness", "--request", requestFile.string(), "--result", resultFile.string()},
        spec.scratchDirectory);
    outcome.sandboxed = command.isolated;
    outcome.sandboxDescription = command.description;
    outcome.sandboxWarning = command.warning;

    for (const auto& [name, value] : spec.workspaceEnvironment)
        command.spec.environmentOverrides[name] = value;
    command.spec.stop = spec.stop;
    ProcessResult process = runProcess(command.spec);
    outcome.log = process.out.text;
    if (!process.err.text.empty())
        outcome.log += (outcome.log.empty() ? "" : "\n") + process.err.text;

    outcome = interpretStageRun(spec, process, resultFile, std::move(outcome));
    recordStageWallTime(outcome, static_cast<double>(process.elapsed.count()) / 1000.0);
    return outcome;
}

} // namespace kwb
