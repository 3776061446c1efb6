#include "engine/tuning/local_policy.h"

#include "engine/cuda/gpu_inventory.h"
#include "engine/process/head_tail_capper.h"
#include "engine/system/resource_paths.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <unistd.h>

namespace kwb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Loading a model and a batch of training can take minutes on a CPU; a process that says
// nothing for this long is taken as hung.
constexpr std::chrono::minutes kRequestTimeout{30};
// What of the process's log an error quotes (its head and tail).
constexpr std::size_t kLogKeepBytes = 3000;

// The reply's error, or "" when it has none (the request succeeded).
std::string errorOf(const json& reply) {
    return reply.contains("error") ? reply["error"].get<std::string>() : std::string();
}

} // namespace

std::string locateModelWorker() {
    if (const char* overridden = std::getenv("KWB_MODEL_WORKER"); overridden && *overridden)
        return overridden;
    const fs::path self = fs::path(currentExecutablePath()).parent_path();
    for (const fs::path& candidate :
         {self / "kwb-model", self.parent_path() / "model_worker" / "kwb-model"})
        if (access(candidate.c_str(), X_OK) == 0)
            return candidate.string();
    return {};
}

std::string resolveModelDevice(const std::string& wanted) {
    if (wanted == "cpu" || wanted == "cuda")
        return wanted;
    return detectGpus().hasGpu() ? "cuda" : "cpu";
}

std::string LocalPolicy::start(const LocalPolicyOptions& options, std::stop_token stop) {
    options_ = options;
    if (options_.executable.empty())
        options_.executable = locateModelWorker();
    if (options_.executable.empty())
        return "kwb-model is not built or installed (it needs libtorch; set KWB_MODEL_WORKER "
               "to its path)";
    if (options_.logPath.empty())
        options_.logPath = "/dev/null";
    ProcessSpec spec;
    spec.argv = {options_.executable,
                 "--threads",
                 std::to_string(options_.threads),
                 "serve",
                 options_.model,
                 "--device",
                 options_.device,
                 "--lora-rank",
                 std::to_string(options_.loraRank),
                 "--lora-alpha",
                 std::to_string(options_.loraAlpha),
                 "--learning-rate",
                 std::to_string(options_.learningRate),
                 "--warmup",
                 std::to_string(options_.warmupSteps),
                 "--seed",
                 std::to_string(options_.seed)};
    if (options_.fullFineTuning)
        spec.argv.push_back("--full");
    std::string error;
    if (!process_.start(spec, options_.logPath, &error))
        return "cannot start kwb-model: " + error;
    bool stopped = false;
    const auto line = readLineOrStop(kRequestTimeout, stop, &stopped);
    if (stopped) {
        process_.kill();
        return "cancelled while the model was loading";
    }
    const json ready = line ? json::parse(*line, nullptr, false) : json();
    if (!ready.is_object() || !ready.value("ready", false)) {
        std::string why = ready.is_object() && ready.contains("error")
                              ? ready["error"].get<std::string>()
                              : "it ended or did not answer";
        process_.kill();
        return "kwb-model could not load " + options_.model + ": " + why + logTail();
    }
    description_ = ready.value("model", "");
    trainableParameters_ = ready.value("trainable_parameters", std::int64_t(0));
    return {};
}

bool LocalPolicy::running() {
    return process_.pid() > 0 && !process_.ended() && process_.running();
}

std::optional<std::string> LocalPolicy::readLineOrStop(std::chrono::milliseconds timeout,
                                                       std::stop_token stop, bool* stopped) {
    if (!stop.stop_possible())
        return process_.readLine(timeout);
    constexpr std::chrono::milliseconds kSlice{100};
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (stop.stop_requested()) {
            *stopped = true;
            return std::nullopt;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left <= std::chrono::milliseconds(0))
            return std::nullopt;
        if (auto line = process_.readLine(std::min(left, kSlice)))
            return line;
        if (process_.ended())
            return std::nullopt;
    }
}

json LocalPolicy::request(json body, std::chrono::milliseconds timeout, std::stop_token stop) {
    const std::uint64_t id = nextId_++;
    body["id"] = id;
    if (!process_.writeLine(body.dump(-1, ' ', false, json::error_handler_t::replace)))
        return {{"error", "the model's process is gone" + logTail()}, {"error_kind", "process"}};
    bool stopped = false;
    const auto line = readLineOrStop(timeout, stop, &stopped);
    if (stopped) {
        // What it was generating is not wanted, and it cannot be told so mid-generation.
        process_.kill();
        return {{"error", "cancelled"}, {"error_kind", "cancelled"}};
    }
    if (!line) {
        if (!process_.ended())
            process_.kill(); // hung: what it was doing is lost either way
        return {{"error", "the model's process ended or stopped answering" + logTail()},
                {"error_kind", "process"}};
    }
    json reply = json::parse(*line, nullptr, false);
    // A process that breaks the protocol is not trusted with the next request either.
    if (!reply.is_object()) {
        process_.kill();
        return {{"error", "the model's process answered something that is not JSON"},
                {"error_kind", "process"}};
    }
    // A reply to an earlier request that timed out on our side cannot arrive: the process is
    // killed then. Anything else out of order is a protocol error.
    if (!reply.contains("id") || !reply["id"].is_number_unsigned() ||
        reply["id"].get<std::uint64_t>() != id) {
        process_.kill();
        return {{"error", "the model's process answered out of order"}, {"error_kind", "process"}};
    }
    if (reply.contains("error") && !reply.contains("error_kind"))
        reply["error_kind"] = "request";
    return reply;
}

PolicyGroup LocalPolicy::sample(const std::string& system, const std::string& user,
                                const PolicySampling& sampling) {
    return sampleChat(json::array({{{"role", "system"}, {"content", system}},
                                   {{"role", "user"}, {"content", user}}}),
                      json::array(), sampling);
}

PolicyGroup LocalPolicy::sampleChat(const json& messages, const json& tools,
                                    const PolicySampling& sampling, std::stop_token stop) {
    PolicyGroup group;
    json body = {{"op", "sample"},
                 {"messages", messages},
                 {"count", sampling.count},
                 {"max_tokens", sampling.maxTokens},
                 {"temperature", sampling.temperature},
                 {"seed", sampling.seed}};
    if (tools.is_array() && !tools.empty())
        body["tools"] = tools;
    if (!sampling.grammar.empty())
        body["grammar"] = sampling.grammar;
    if (!sampling.stop.empty())
        body["stop"] = sampling.stop;
    if (sampling.tokenTexts)
        body["token_texts"] = true;
    const json reply = request(std::move(body), kRequestTimeout, stop);
    if (reply.contains("error")) {
        group.error =
            reply["error"].is_string() ? reply["error"].get<std::string>() : reply["error"].dump();
        group.errorKind = reply.value("error_kind", "request");
        return group;
    }
    try {
        group.promptTokens = reply.at("prompt_tokens").get<std::vector<std::int32_t>>();
        for (const json& s : reply.at("samples")) {
            PolicySample sample;
            sample.text = s.at("text").get<std::string>();
            sample.tokens = s.at("tokens").get<std::vector<std::int32_t>>();
            sample.logprobs = s.at("logprobs").get<std::vector<float>>();
            sample.stopReason = s.at("stop_reason").get<std::string>();
            if (sample.logprobs.size() != sample.tokens.size())
                throw std::runtime_error("a sample's log-probabilities and tokens differ in count");
            sample.content = s.value("content", sample.text);
            if (s.contains("tool_calls")) {
                sample.toolCalls = s["tool_calls"];
                for (const json& call : sample.toolCalls)
                    if (!call.is_object() || !call.value("name", json()).is_string() ||
                        !call.value("arguments", json()).is_string())
                        throw std::runtime_error("a tool call without a name or arguments");
            }
            if (s.contains("token_texts"))
                sample.tokenTexts = s["token_texts"].get<std::vector<std::string>>();
            group.samples.push_back(std::move(sample));
        }
        group.seconds = reply.value("seconds", 0.0);
        group.tokensPerSecond = reply.value("tokens_per_second", 0.0);
    } catch (const std::exception& e) {
        group = {};
        group.error = std::string("the model's reply is malformed: ") + e.what();
        group.errorKind = "process";
        process_.kill();
    }
    return group;
}

json LocalPolicy::grpoStep(const json& episodes, const json& settings) {
    json body = settings;
    body["op"] = "grpo";
    body["episodes"] = episodes;
    return request(std::move(body), kRequestTimeout);
}

std::string LocalPolicy::save(const std::string& folder) {
    return errorOf(request({{"op", "save"}, {"out", folder}}, kRequestTimeout));
}

std::string LocalPolicy::checkpoint(const std::string& path) {
    return errorOf(request({{"op", "checkpoint"}, {"out", path}}, kRequestTimeout));
}

std::string LocalPolicy::restore(const std::string& path) {
    return errorOf(request({{"op", "restore"}, {"from", path}}, kRequestTimeout));
}

void LocalPolicy::stop() {
    if (process_.pid() > 0 && process_.running())
        process_.writeLine(R"({"op":"quit"})");
    process_.kill();
}

// The process log's head and tail, for an error that says why it died.
std::string LocalPolicy::logTail() const {
    std::string log = capFileHeadTail(options_.logPath, kLogKeepBytes).text;
    while (!log.empty() && (log.back() == '\n' || log.back() == ' '))
        log.pop_back();
    return log.empty() ? std::string() : "; its log ends:\n" + log;
}

} // namespace kwb
