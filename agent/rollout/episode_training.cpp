#include "agent/rollout/episode_training.h"

#include "agent/rollout/run_export.h"
#include "agent/store/trajectory_store.h"
#include "engine/process/process_runner.h"
#include "engine/timeline/record_file_tail.h"
#include "engine/tuning/local_policy.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace kwb::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

enum class ValueType { Number, Integer, Boolean, Text, TextList };

struct TrainerKey {
    const char* flag;
    ValueType type;
    // Which algorithms take it: every one, the RL ones, the ones with a critic, or PPO alone.
    enum class Scope { All, Rl, Critic, Ppo } scope;
};

const std::map<std::string, TrainerKey>& trainerKeys() {
    using S = TrainerKey::Scope;
    static const std::map<std::string, TrainerKey> keys = {
        {"steps", {"--steps", ValueType::Integer, S::All}},
        {"batch_size", {"--batch-size", ValueType::Integer, S::All}},
        {"max_tokens", {"--max-tokens", ValueType::Integer, S::All}},
        {"learning_rate", {"--learning-rate", ValueType::Number, S::All}},
        {"warmup", {"--warmup", ValueType::Integer, S::All}},
        {"weight_decay", {"--weight-decay", ValueType::Number, S::All}},
        {"max_grad_norm", {"--max-grad-norm", ValueType::Number, S::All}},
        {"lora_rank", {"--lora-rank", ValueType::Integer, S::All}},
        {"lora_alpha", {"--lora-alpha", ValueType::Number, S::All}},
        {"lora_targets", {"--lora-targets", ValueType::TextList, S::All}},
        {"full", {"--full", ValueType::Boolean, S::All}},
        {"gradient_checkpointing", {"--gradient-checkpointing", ValueType::Boolean, S::All}},
        {"checkpoint_in", {"--checkpoint-in", ValueType::Text, S::All}},
        {"epochs", {"--epochs", ValueType::Integer, S::Rl}},
        {"clip_low", {"--clip-low", ValueType::Number, S::Rl}},
        {"clip_high", {"--clip-high", ValueType::Number, S::Rl}},
        {"kl", {"--kl", ValueType::Number, S::Rl}},
        {"entropy", {"--entropy", ValueType::Number, S::Rl}},
        {"critic_learning_rate", {"--critic-learning-rate", ValueType::Number, S::Critic}},
        {"critic_rank", {"--critic-rank", ValueType::Integer, S::Critic}},
        {"value_clip", {"--value-clip", ValueType::Number, S::Critic}},
        {"gamma", {"--gamma", ValueType::Number, S::Critic}},
        {"lambda", {"--lambda", ValueType::Number, S::Critic}},
        {"value_steps", {"--value-steps", ValueType::Integer, S::Ppo}},
    };
    return keys;
}

bool inScope(TrainerKey::Scope scope, EpisodeTrainingAlgorithm a) {
    using S = TrainerKey::Scope;
    switch (scope) {
    case S::All:
        return true;
    case S::Rl:
        return a != EpisodeTrainingAlgorithm::Rft;
    case S::Critic:
        return a == EpisodeTrainingAlgorithm::Value || a == EpisodeTrainingAlgorithm::Ppo;
    case S::Ppo:
        return a == EpisodeTrainingAlgorithm::Ppo;
    }
    return false;
}

bool hasType(const json& value, ValueType type) {
    switch (type) {
    case ValueType::Number:
        return value.is_number() && value.get<double>() >= 0;
    case ValueType::Integer:
        return value.is_number_integer() && value.get<std::int64_t>() >= 0;
    case ValueType::Boolean:
        return value.is_boolean();
    case ValueType::Text:
        return value.is_string() && !value.get<std::string>().empty();
    case ValueType::TextList:
        if (!value.is_array() || value.empty())
            return false;
        for (const json& item : value)
            if (!item.is_string())
                return false;
        return true;
    }
    return false;
}

const char* typeText(ValueType type) {
    switch (type) {
    case ValueType::Number:
        return "a number >= 0";
    case ValueType::Integer:
        return "a whole number >= 0";
    case ValueType::Boolean:
        return "true or false";
    case ValueType::Text:
        return "a text";
    case ValueType::TextList:
        return "a list of texts";
    }
    return "";
}

std::string kwbModelCommand(EpisodeTrainingAlgorithm a) {
    return a == EpisodeTrainingAlgorithm::Rft ? "sft" : episodeTrainingAlgorithmName(a);
}

// The last lines of a process's error output: what a failed training says about itself.
std::string lastLines(const std::string& text, int count) {
    std::size_t at = text.size();
    while (at > 0 && (text[at - 1] == '\n' || text[at - 1] == ' '))
        --at;
    const std::size_t end = at;
    for (int n = 0; n < count && at > 0; ++n) {
        at = text.rfind('\n', at - 1);
        if (at == std::string::npos) {
            at = 0;
            break;
        }
    }
    return text.substr(at == 0 ? 0 : at + 1, end - (at == 0 ? 0 : at + 1));
}

} // namespace

std::optional<EpisodeTrainingAlgorithm> parseEpisodeTrainingAlgorithm(const std::string& name) {
    if (name == "rft")
        return EpisodeTrainingAlgorithm::Rft;
    if (name == "grpo")
        return EpisodeTrainingAlgorithm::Grpo;
    if (name == "value")
        return EpisodeTrainingAlgorithm::Value;
    if (name == "ppo")
        return EpisodeTrainingAlgorithm::Ppo;
    return std::nullopt;
}

const char* episodeTrainingAlgorithmName(EpisodeTrainingAlgorithm algorithm) {
    switch (algorithm) {
    case EpisodeTrainingAlgorithm::Rft:
        return "rft";
    case EpisodeTrainingAlgorithm::Grpo:
        return "grpo";
    case EpisodeTrainingAlgorithm::Value:
        return "value";
    case EpisodeTrainingAlgorithm::Ppo:
        return "ppo";
    }
    return "rft";
}

std::optional<EpisodeTrainingConfig>
EpisodeTrainingConfig::fromJson(const json& settings, EpisodeTrainingAlgorithm algorithm,
                                std::string* error) {
    const auto failWith = [error](const std::string& why) {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (!settings.is_object())
        return failWith("the settings are not a JSON object");
    EpisodeTrainingConfig c;
    c.algorithm = algorithm;
    const std::string name = episodeTrainingAlgorithmName(algorithm);
    for (const auto& [key, value] : settings.items()) {
        if (key == "model" || key == "out" || key == "store" || key == "data" || key == "device") {
            if (!value.is_string())
                return failWith("\"" + key + "\" must be a text");
            const std::string text = value.get<std::string>();
            if (key == "model")
                c.model = text;
            else if (key == "out")
                c.out = text;
            else if (key == "store")
                c.store = text;
            else if (key == "data")
                c.data = text;
            else if (text != "auto" && text != "cpu" && text != "cuda")
                return failWith("\"device\" is auto, cpu or cuda, not '" + text + "'");
            else
                c.device = text;
        } else if (key == "run") {
            if (!value.is_number_integer() || value.get<std::int64_t>() <= 0)
                return failWith("\"run\" must be a run id (a whole number above 0)");
            c.run = value.get<std::int64_t>();
        } else if (key == "min_reward") {
            if (!value.is_number())
                return failWith("\"min_reward\" must be a number");
            if (algorithm != EpisodeTrainingAlgorithm::Rft)
                return failWith("\"min_reward\" chooses rft's episodes; " + name +
                                " trains on every scored episode");
            c.minReward = value.get<double>();
        } else if (const auto found = trainerKeys().find(key); found != trainerKeys().end()) {
            if (!inScope(found->second.scope, algorithm))
                return failWith("\"" + key + "\" is not a setting of " + name);
            if (!hasType(value, found->second.type))
                return failWith("\"" + key + "\" must be " + typeText(found->second.type));
            c.trainer[key] = value;
        } else {
            return failWith("unknown setting \"" + key + "\"");
        }
    }
    if (c.model.empty())
        return failWith("no \"model\": a GGUF file or Hugging Face folder");
    if (c.out.empty())
        return failWith("no \"out\": the training run's folder");
    if (c.run.has_value() == !c.data.empty())
        return failWith("give the episodes as \"run\" (a run of the store) or \"data\" (exported "
                        "rows), one of the two");
    if (!c.store.empty() && !c.run)
        return failWith("\"store\" goes with \"run\"");
    return c;
}

json EpisodeTrainingConfig::toJson() const {
    json j = trainer;
    j["algorithm"] = episodeTrainingAlgorithmName(algorithm);
    j["model"] = model;
    j["out"] = out;
    j["device"] = device;
    if (run)
        j["run"] = *run;
    if (!store.empty())
        j["store"] = store;
    if (!data.empty())
        j["data"] = data;
    if (algorithm == EpisodeTrainingAlgorithm::Rft)
        j["min_reward"] = minReward;
    return j;
}

std::vector<std::string> trainerArguments(const EpisodeTrainingConfig& config,
                                          const std::string& executable,
                                          const std::string& dataPath, const std::string& device) {
    const fs::path out(config.out);
    std::vector<std::string> argv = {executable,
                                     "train",
                                     kwbModelCommand(config.algorithm),
                                     config.model,
                                     "--data",
                                     dataPath,
                                     "--device",
                                     device,
                                     "--steps-out",
                                     (out / "steps.jsonl").string(),
                                     "--checkpoint-out",
                                     (out / "checkpoint.pt").string()};
    if (config.algorithm != EpisodeTrainingAlgorithm::Value) {
        argv.push_back("--out");
        argv.push_back((out / "model").string());
    }
    for (const auto& [key, value] : config.trainer.items()) {
        const TrainerKey& k = trainerKeys().at(key);
        if (k.type == ValueType::Boolean) {
            if (value.get<bool>())
                argv.push_back(k.flag);
            continue;
        }
        argv.push_back(k.flag);
        if (k.type == ValueType::TextList) {
            std::string joined;
            for (const json& item : value)
                joined += (joined.empty() ? "" : ",") + item.get<std::string>();
            argv.push_back(joined);
        } else if (k.type == ValueType::Text) {
            argv.push_back(value.get<std::string>());
        } else {
            argv.push_back(value.dump());
        }
    }
    return argv;
}

EpisodeTrainingOutcome runEpisodeTraining(const EpisodeTrainingConfig& config,
                                          const std::function<void(const json&)>& onStep,
                                          std::stop_token stop) {
    EpisodeTrainingOutcome outcome;
    const fs::path out(config.out);
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_empty(out, ec)) {
        outcome.error = config.out + " exists and is not empty";
        return outcome;
    }
    fs::create_directories(out, ec);
    if (ec) {
        outcome.error = "cannot create " + config.out + ": " + ec.message();
        return outcome;
    }
    std::ofstream(out / "config.json") << config.toJson().dump(2) << "\n";

    // The rows, kept with the run so it can be repeated and inspected.
    const fs::path dataPath = out / "data.jsonl";
    if (config.run) {
        auto opened = TrajectoryStore::open(config.store.empty() ? TrajectoryStore::defaultPath()
                                                                 : config.store);
        if (!opened) {
            outcome.error = opened.error().message;
            return outcome;
        }
        RunExportOptions options;
        options.format = config.algorithm == EpisodeTrainingAlgorithm::Rft
                             ? RunExportFormat::Rft
                             : RunExportFormat::VerlSft;
        options.minReward = config.minReward;
        std::ofstream rows(dataPath);
        auto written = exportRun(*opened.value(), *config.run, options, rows);
        if (!written) {
            outcome.error = written.error().message;
            return outcome;
        }
        outcome.rows = int(written.value());
        if (outcome.rows == 0) {
            outcome.error = "run " + std::to_string(*config.run) + " has no episode to train on" +
                            (config.algorithm == EpisodeTrainingAlgorithm::Rft
                                 ? " (rft keeps scored episodes with reward >= " +
                                       std::to_string(config.minReward) +
                                       " that neither looped nor made an invalid tool call)"
                                 : " (none is scored yet)");
            return outcome;
        }
    } else {
        std::ifstream in(config.data);
        if (!in) {
            outcome.error = "cannot read " + config.data;
            return outcome;
        }
        std::ofstream rows(dataPath);
        for (std::string line; std::getline(in, line);) {
            rows << line << "\n";
            outcome.rows += line.find_first_not_of(" \t\r") != std::string::npos ? 1 : 0;
        }
    }

    const std::string executable = locateModelWorker();
    if (executable.empty()) {
        outcome.error = "kwb-model is not built or installed (it needs libtorch; set "
                        "KWB_MODEL_WORKER to its path)";
        return outcome;
    }
    ProcessSpec spec;
    spec.argv =
        trainerArguments(config, executable, dataPath.string(), resolveModelDevice(config.device));
    spec.outputLimitBytes = 1 << 20;
    spec.stop = stop;
    const auto started = std::chrono::steady_clock::now();
    ProcessResult result;
    std::atomic<bool> finished{false};
    std::jthread trainer([&] {
        result = runProcess(spec);
        finished = true;
    });
    timeline::RecordFileTail steps((out / "steps.jsonl").string());
    const auto follow = [&] {
        steps.poll([&](std::string_view line) {
            const json step = json::parse(line, nullptr, false);
            if (!step.is_object())
                return;
            if (step.value("event", "") == "step") {
                ++outcome.steps;
                outcome.last = step;
            }
            if (onStep)
                onStep(step);
        });
    };
    while (!finished) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        follow();
    }
    trainer.join();
    follow();
    std::ofstream(out / "train.log") << result.err.text;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (result.cancelled) {
        outcome.stopped = true;
    } else if (!result.succeeded()) {
        const std::string said = lastLines(result.err.text, 6);
        outcome.error = "kwb-model train " + kwbModelCommand(config.algorithm) + ": " +
                        (result.started ? result.statusText() : result.startError) +
                        (said.empty() ? std::string() : "\n" + said);
    }
    std::ofstream(out / "summary.json")
        << json{{"algorithm", episodeTrainingAlgorithmName(config.algorithm)},
                {"rows", outcome.rows},
                {"steps", outcome.steps},
                {"last_step", outcome.last},
                {"seconds", seconds},
                {"stopped", outcome.stopped},
                {"error", outcome.error},
                {"model", config.algorithm == EpisodeTrainingAlgorithm::Value
                              ? std::string()
                              : (out / "model").string()}}
               .dump(2)
        << "\n";
    return outcome;
}

} // namespace kwb::agent
