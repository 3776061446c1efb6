#include "agent/rollout/episode_training.h"
#include "commands.h"
#include "stop_on_signals.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

namespace kwb::cli {
namespace {

using nlohmann::json;

void printStep(const json& e) {
    const std::string event = e.value("event", "");
    if (event == "start") {
        std::cerr << e.value("algorithm", "") << " on " << e.value("conversations", 0)
                  << " episodes (" << e.value("groups", 0) << " tasks), " << e.value("steps", 0)
                  << " steps";
        if (e.value("value_steps", 0) > 0)
            std::cerr << " after " << e.value("value_steps", 0) << " value steps";
        std::cerr << "; " << e.value("model", "") << ", " << e.value("trainable_parameters", 0)
                  << " trainable parameters\n";
    } else if (event == "step") {
        std::cerr << std::fixed << std::setprecision(4) << e.value("phase", "policy") << " step "
                  << e.value("step", 0) << ": loss " << e.value("loss", 0.0);
        const std::string phase = e.value("phase", "");
        if (phase == "value")
            std::cerr << ", value loss " << e.value("value_loss", 0.0) << ", mean value "
                      << e.value("mean_value", 0.0) << " (return " << e.value("mean_return", 0.0)
                      << ")";
        else if (phase == "supervised")
            std::cerr << ", entropy " << e.value("entropy", 0.0);
        else
            std::cerr << ", reward " << e.value("mean_reward", 0.0) << ", kl "
                      << e.value("approximate_kl", 0.0) << ", entropy " << e.value("entropy", 0.0)
                      << ", clip " << e.value("clip_fraction", 0.0);
        std::cerr << ", grad norm " << e.value("grad_norm", 0.0) << std::setprecision(0) << ", "
                  << e.value("tokens_per_second", 0.0) << " tokens/s\n";
    }
}

} // namespace

void addEpisodeTrainingCommands(CLI::App* train) {
    const auto add = [train](const char* name, const char* description) {
        auto configPath = std::make_shared<std::string>();
        auto out = std::make_shared<std::string>();
        auto run = std::make_shared<std::int64_t>(0);
        auto cmd = train->add_subcommand(name, description);
        cmd->add_option("--config", *configPath,
                        "The settings (JSON): model, out, run (and store) or data, device, and "
                        "kwb-model's training options (steps, batch_size, learning_rate, "
                        "lora_rank, epochs, clip_low, clip_high, kl, entropy, value_steps, ...)")
            ->required();
        cmd->add_option("--out", *out, "The training run's folder (overrides the file)");
        cmd->add_option("--run", *run, "The rollout run to train on (overrides the file)")
            ->check(CLI::PositiveNumber);
        cmd->callback([=] {
            std::ifstream in(*configPath);
            json settings = json::parse(in, nullptr, false);
            if (!in.is_open() || settings.is_discarded())
                failCommand(*configPath + " is not a readable JSON file");
            if (!out->empty())
                settings["out"] = *out;
            if (*run > 0) {
                settings["run"] = *run;
                settings.erase("data");
            }
            std::string error;
            const auto config = agent::EpisodeTrainingConfig::fromJson(
                settings, *agent::parseEpisodeTrainingAlgorithm(name), &error);
            if (!config)
                failCommand(*configPath + ": " + error);
            std::stop_source stop;
            std::optional<StopOnSignals> stopOnSignals(std::in_place, stop);
            const agent::EpisodeTrainingOutcome outcome =
                agent::runEpisodeTraining(*config, printStep, stop.get_token());
            stopOnSignals.reset();
            if (!outcome.error.empty())
                failCommand(outcome.error + "\n(the run's folder: " + config->out + ")");
            std::cerr << (outcome.stopped ? "stopped after " : "done: ") << outcome.steps
                      << " steps on " << outcome.rows << " episodes; " << config->out << "\n";
            std::cout << outcome.last.dump() << "\n";
        });
    };
    add("rft", "Rejection fine-tuning of the actor on a rollout run's successful episodes "
               "(reward >= min_reward, no loops, no invalid tool calls)");
    add("grpo", "GRPO on a run's scored episodes: each episode's reward against its task's "
                "others, a local model's replies trained as the tokens it drew");
    add("value", "Value pretraining of PPO's critic on a run's scored episodes; the critic is in "
                 "the folder's checkpoint.pt for `train ppo` (checkpoint_in)");
    add("ppo", "PPO on a run's scored episodes: GAE with the critic's values (gamma 1, lambda "
               "0.95), the asymmetric clip (0.2 / 0.28); value_steps pretrains the critic first");
}

} // namespace kwb::cli
