#include "daemon_evaluation.h"

#include "engine/evaluation/evaluation_result.h"
#include "engine/service/evaluation_request_json.h"
#include "engine/service/service_client.h"
#include "engine/system/resource_paths.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace kwb::cli {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string absolute(const std::string& path) {
    if (path.empty())
        return path;
    std::error_code ec;
    const std::filesystem::path full = std::filesystem::absolute(path, ec);
    return ec ? path : full.lexically_normal().string();
}

// Connects to this configuration's daemon, starting one when none answers. Sets `started`.
std::optional<ServiceClient> daemonFor(const std::string& python, bool& started,
                                       std::string* error) {
    ServiceClient client(serviceEndpoint(serviceFingerprint(python)));
    started = false;
    if (client.reachable())
        return client;
    std::vector<std::string> arguments{"--idle-exit", std::to_string(kDefaultIdleExitSeconds)};
    if (!python.empty())
        arguments.insert(arguments.end(), {"--python", python});
    // The daemon answers once its socket listens; the service's workers start with it.
    if (!client.startDaemon(currentExecutablePath(), arguments, std::chrono::seconds(20), error))
        return std::nullopt;
    started = true;
    return client;
}

std::optional<EvaluationResult> resultFrom(const ServiceReply& reply, std::string* error) {
    if (!reply.error.empty() || !reply.value.contains("result")) {
        if (error)
            *error = reply.error.empty() ? "the daemon's answer has no result" : reply.error;
        return std::nullopt;
    }
    EvaluationResult result;
    std::string why;
    if (!fromJson(reply.value["result"], result, &why)) {
        if (error)
            *error = "the daemon's result cannot be read: " + why;
        return std::nullopt;
    }
    return result;
}

// The client's own share of the wall time as the record's first stage.
void accountForTheService(EvaluationResult& result, Clock::time_point began, bool started) {
    const double wall = std::chrono::duration<double>(Clock::now() - began).count();
    StageRecord service;
    service.name = "service";
    service.status = StageStatus::Passed;
    service.seconds = std::max(0.0, wall - result.totalSeconds);
    service.startSeconds = service.seconds;
    service.summary = started ? "through kwb serve, started for this call"
                              : "through kwb serve (already running)";
    result.stages.insert(result.stages.begin(), service);
    result.totalSeconds = std::max(wall, result.totalSeconds);
}

// One request whose answer is an evaluation record, through this configuration's daemon
// (started when none answers); the record gains the client's share as its "service" stage.
std::optional<EvaluationResult> callDaemon(const std::string& python, const json& request,
                                           const Evaluator::Progress& progress,
                                           std::string* error) {
    const Clock::time_point began = Clock::now();
    bool started = false;
    const std::optional<ServiceClient> client = daemonFor(python, started, error);
    if (!client)
        return std::nullopt;
    std::optional<EvaluationResult> result = resultFrom(client->call(request, progress), error);
    if (result)
        accountForTheService(*result, began, started);
    return result;
}

} // namespace

std::optional<ServeMode> serveModeFrom(const std::string& text) {
    if (text == "auto")
        return ServeMode::Auto;
    if (text == "on")
        return ServeMode::On;
    if (text == "off")
        return ServeMode::Off;
    return std::nullopt;
}

ServeMode serveModeFor(const std::string& option) {
    if (!option.empty())
        return serveModeFrom(option).value_or(ServeMode::Auto);
    const char* variable = std::getenv("KWB_SERVE");
    return variable ? serveModeFrom(variable).value_or(ServeMode::Auto) : ServeMode::Auto;
}

std::optional<EvaluationResult> evaluateThroughDaemon(const EvaluationTarget& target,
                                                      const EvaluationOptions& options,
                                                      const std::string& python,
                                                      const Evaluator::Progress& progress,
                                                      std::string* error) {
    // The daemon runs elsewhere (another working folder): it gets absolute paths.
    EvaluationTarget absoluteTarget{absolute(target.workspace), absolute(target.referencePath),
                                    absolute(target.candidatePath)};
    EvaluationOptions sent = options;
    sent.timelineRecordPath = absolute(options.timelineRecordPath);
    return callDaemon(python,
                      {{"op", "eval"},
                       {"target", toJson(absoluteTarget)},
                       {"options", toJson(sent)},
                       {"tag", "cli:" + std::to_string(::getpid())}},
                      progress, error);
}

std::optional<EvaluationResult> evaluateTargetWhereServed(const std::string& serveOption,
                                                          const EvaluationTarget& target,
                                                          const EvaluationOptions& options,
                                                          const std::string& python,
                                                          const Evaluator::Progress& progress) {
    return evaluateWhereServed(
        serveOption, [&] { return Evaluator(python).evaluate(target, options, progress); },
        [&](std::string* error) {
            return evaluateThroughDaemon(target, options, python, progress, error);
        });
}

std::optional<EvaluationResult> baselineThroughDaemon(const std::string& taskPath,
                                                      const EvaluationOptions& options,
                                                      const std::string& python,
                                                      std::string* error) {
    return callDaemon(
        python, {{"op", "baseline"}, {"task", absolute(taskPath)}, {"options", toJson(options)}},
        {}, error);
}

} // namespace kwb::cli
