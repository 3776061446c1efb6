#include "commands.h"
#include "engine/evaluation/evaluation_profile.h"
#include "engine/service/evaluation_service.h"
#include "engine/system/resource_paths.h"
#include "engine/tuning/kernel_tuning_run.h"
#include "stop_on_signals.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

namespace kwb::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string figures(const json& f) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(2) << "reward " << f.value("mean_reward", 0.0)
         << ", pass " << std::setprecision(0) << 100 * f.value("pass_rate", 0.0) << "%, "
         << std::setprecision(2) << f.value("speedup_vs_eager", 0.0) << "x eager, "
         << std::setprecision(0) << 100 * f.value("faster_than_compile", 0.0) << "% beat compile, "
         << f.value("distinct_actions", 0) << " distinct";
    return text.str();
}

void printEvent(const json& e) {
    const std::string kind = e.value("event", "");
    if (kind == "phase") {
        std::cerr << "== " << e.value("phase", "") << "\n";
    } else if (kind == "step") {
        const json& u = e["update"];
        std::cerr << "step " << e.value("step", 0) << ": " << figures(e);
        if (u.contains("loss"))
            std::cerr << std::fixed << std::setprecision(4) << "; loss " << u.value("loss", 0.0)
                      << ", kl " << u.value("approximate_kl", 0.0) << ", entropy "
                      << u.value("entropy", 0.0) << ", clip " << u.value("clip_fraction", 0.0);
        std::cerr << std::setprecision(1) << " (" << e.value("seconds", 0.0) << " s)\n";
    } else if (kind == "time_limit") {
        std::cerr << "training time is up after " << e.value("steps_taken", 0) << " steps\n";
    } else if (kind == "summary") {
        for (const auto& [name, space] : e["summary"]["spaces"].items()) {
            std::cerr << name << (space.value("held_out", false) ? " (held out)" : "") << "\n";
            for (const char* phase : {"start", "random", "final"})
                if (space.contains(phase))
                    std::cerr << "  " << std::setw(6) << std::left << phase << " "
                              << figures(space[phase])
                              << "; most sampled: " << space[phase].value("most_sampled", "")
                              << "\n";
        }
    }
}

} // namespace

void addTrainCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand("train", "Train a local model on GPU rewards");
    cmd->require_subcommand(1);
    addEpisodeTrainingCommands(cmd);
    auto configPath = std::make_shared<std::string>();
    auto overrides = std::make_shared<json>(json::object());
    auto steps = std::make_shared<int>(-1);
    auto trainingSeconds = std::make_shared<double>(-1);
    auto model = std::make_shared<std::string>();
    auto device = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto evalDevice = std::make_shared<std::string>("auto");
    auto python = std::make_shared<std::string>();
    auto* tune = cmd->add_subcommand(
        "tune",
        "GRPO on kernel-tuning spaces (resources/tuning): the local model writes each kernel's "
        "settings under a grammar, the template becomes a fast-path workspace, the evaluation "
        "service scores it with the milestone reward; before and after training the policy is "
        "sampled on the training and held-out spaces beside a random-choice baseline. The run's "
        "folder gets config.json, samples.jsonl, steps.jsonl and summary.json as it goes");
    tune->add_option("--config", *configPath,
                     "JSON settings: train, held_out, steps, training_seconds, samples_per_space, "
                     "evaluation_samples, temperature, speed_bonus, epochs, kl, seed, model, "
                     "device, lora_rank, lora_alpha, learning_rate, warmup, full, out, "
                     "save_model, timing (quick or rl), standby, threads")
        ->check(CLI::ExistingFile);
    auto resume = std::make_shared<std::string>();
    auto* resumeOption =
        tune->add_option("--resume", *resume,
                         "Continue the run in this folder (a stopped run, or one whose machine "
                         "went away): its settings, measured actions and checkpoint; --steps "
                         "may extend it")
            ->check(CLI::ExistingDirectory);
    tune->get_option("--config")->excludes(resumeOption);
    tune->add_option("--steps", *steps, "Training steps (overrides the file)")
        ->check(CLI::NonNegativeNumber);
    tune->add_option("--training-seconds", *trainingSeconds,
                     "Stop starting training steps after this many seconds of this process, 0 "
                     "for no limit (overrides the file; a resumed run's part gets its own)")
        ->check(CLI::NonNegativeNumber);
    tune->add_option("--model", *model, "GGUF file or model folder (overrides the file)");
    tune->add_option("--device", *device, "The policy's device, cpu or cuda (overrides the file)")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    tune->add_option("--out", *out, "The run's folder (overrides the file)");
    tune->add_option("--eval-device", *evalDevice, "Where candidates run: auto, cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    tune->add_option("--python", *python, "The task Python (default: auto-detect)");
    tune->callback([=] {
        if (configPath->empty() && resume->empty())
            failCommand("give the run's settings (--config FILE) or a run to continue "
                        "(--resume FOLDER)");
        const std::string settingsPath =
            resume->empty() ? *configPath : (fs::path(*resume) / "config.json").string();
        std::ifstream in(settingsPath);
        json settings = json::parse(in, nullptr, false);
        if (settings.is_discarded())
            failCommand(settingsPath + " is not JSON");
        if (*steps >= 0)
            settings["steps"] = *steps;
        if (*trainingSeconds >= 0)
            settings["training_seconds"] = *trainingSeconds;
        if (!model->empty())
            settings["model"] = *model;
        if (!device->empty())
            settings["device"] = *device;
        if (!resume->empty() && !out->empty())
            failCommand("a resumed run stays in its folder: leave out --out");
        if (!out->empty())
            settings["out"] = *out;
        if (!resume->empty())
            settings["out"] = *resume;
        std::string error;
        auto config = TuningRunConfig::fromJson(settings, &error);
        if (!config)
            failCommand(settingsPath + ": " + error);
        config->resume = !resume->empty();
        if (config->policy.model.empty())
            failCommand("no model: give \"model\" in the settings or --model");
        if (config->out.empty())
            failCommand("no run folder: give \"out\" in the settings or --out");
        if (!config->resume && fs::exists(config->out) && !fs::is_empty(config->out))
            failCommand(config->out +
                        " exists and is not empty (to continue a run there: "
                        "--resume " +
                        config->out + ")");
        const std::string directory =
            config->spacesDirectory.empty() ? bundledTuningDirectory() : config->spacesDirectory;
        auto train =
            loadTuningSpaces(directory, config->trainSpaces, bundledTasksDirectory(), &error);
        if (!train)
            failCommand(error);
        std::vector<TuningSpace> heldOut;
        if (!config->heldOutSpaces.empty()) {
            auto loaded =
                loadTuningSpaces(directory, config->heldOutSpaces, bundledTasksDirectory(), &error);
            if (!loaded)
                failCommand(error);
            heldOut = std::move(*loaded);
        }
        fs::create_directories(config->out);
        config->policy.logPath = (fs::path(config->out) / "policy.log").string();
        LocalPolicy policy;
        if (std::string why = policy.start(config->policy); !why.empty())
            failCommand(why);
        std::cerr << "policy: " << policy.description() << ", " << policy.trainableParameters()
                  << " trainable parameters\n";
        EvaluationServiceConfig serviceConfig;
        serviceConfig.python = *python;
        // The scorer's slots are the evaluations in flight; a warm worker more keeps one ready.
        serviceConfig.concurrentEvaluations = unsigned(config->parallelEvaluations);
        serviceConfig.warmWorkerCapacity = std::size_t(config->parallelEvaluations) + 1;
        EvaluationService service(serviceConfig);
        const EvaluationOptions options =
            tuningEvaluationOptions(*config, deviceChoiceFrom(*evalDevice));
        EvaluationScorer scorer(service, options, (fs::path(config->out) / "workspaces").string(),
                                config->parallelEvaluations);
        // Phases timed otherwise get their own scorer: their own workspaces and measurements.
        std::optional<EvaluationScorer> phaseScorer;
        if (phasesTimedApart(*config))
            phaseScorer.emplace(
                service, tuningEvaluationOptions(*config, deviceChoiceFrom(*evalDevice), true),
                (fs::path(config->out) / "phase-workspaces").string(), config->parallelEvaluations);
        std::stop_source stop;
        std::optional<StopOnSignals> stopOnSignals(std::in_place, stop);
        const TuningRunOutcome outcome =
            runKernelTuning(*config, *train, heldOut, policy, scorer,
                            phaseScorer ? *phaseScorer : scorer, printEvent, stop.get_token());
        stopOnSignals.reset();
        policy.stop();
        std::cerr << "measured "
                  << scorer.measuredActions() + (phaseScorer ? phaseScorer->measuredActions() : 0)
                  << " distinct actions; run folder " << config->out << "\n";
        if (!outcome.error.empty())
            failCommand(outcome.error);
        if (outcome.stopped)
            std::cerr << "stopped; the samples and steps so far are in the run folder\n";
        std::cout << outcome.summary.dump(2) << "\n";
    });
}

} // namespace kwb::cli
