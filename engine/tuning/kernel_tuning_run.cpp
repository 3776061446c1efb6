#include "engine/tuning/kernel_tuning_run.h"

#include "engine/evaluation/evaluation_profile.h"
#include "engine/tuning/sample_figures.h"
#include "engine/workspace/contained_files.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

namespace kwb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class RunFiles {
public:
    explicit RunFiles(const std::string& out) {
        if (out.empty())
            return;
        fs::create_directories(out);
        samples_.open(fs::path(out) / "samples.jsonl", std::ios::app);
        steps_.open(fs::path(out) / "steps.jsonl", std::ios::app);
    }
    void sample(const json& row) {
        if (samples_.is_open())
            samples_ << row.dump() << std::endl;
    }
    void step(const json& row) {
        if (steps_.is_open())
            steps_ << row.dump() << std::endl;
    }

private:
    std::ofstream samples_, steps_;
};

json scoreJson(const TuningScore& s, double speedBonus) {
    json row = {{"reward", s.reward},
                {"training_reward", trainingReward(s, speedBonus)},
                {"correct", s.correct},
                {"speedup_vs_eager", s.speedupVsEager},
                {"speedup_vs_compile", s.speedupVsCompile},
                {"verdict", s.verdict},
                {"reused", s.reused},
                {"seconds", s.seconds}};
    if (!s.stageSeconds.empty())
        row["stages"] = s.stageSeconds;
    if (!s.measured)
        row["error"] = s.error;
    return row;
}

// What the earlier parts of a resumed run left: the samples still valid (not those of a step
// that did not finish, nor the final phase's, which judged an earlier policy) and the last
// finished step. samples.jsonl is rewritten with the valid rows only.
struct EarlierParts {
    std::vector<json> samples;
    int steps = 0;
    std::string error;
};

std::vector<json> readRows(const fs::path& file, std::string* error) {
    std::vector<json> rows;
    std::ifstream in(file);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (line.empty())
            continue;
        json row = json::parse(line, nullptr, false);
        if (!row.is_object()) {
            // A line cut by a crash can only be the last one.
            if (in.peek() == std::ifstream::traits_type::eof())
                break;
            *error = file.string() + " line " + std::to_string(number) + " is not a JSON object";
            return {};
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

EarlierParts readEarlierParts(const std::string& out) {
    EarlierParts parts;
    const fs::path folder(out);
    const std::vector<json> steps = readRows(folder / "steps.jsonl", &parts.error);
    for (const json& row : steps)
        parts.steps = std::max(parts.steps, row.value("step", 0));
    if (!parts.error.empty())
        return parts;
    for (json& row : readRows(folder / "samples.jsonl", &parts.error)) {
        const std::string phase = row.value("phase", "");
        if (phase == "start" || phase == "random" ||
            (phase == "train" && row.value("step", 0) <= parts.steps))
            parts.samples.push_back(std::move(row));
    }
    if (!parts.error.empty())
        return parts;
    std::string kept;
    for (const json& row : parts.samples)
        kept += row.dump() + "\n";
    std::string why;
    if (!writeFileInside(folder, "samples.jsonl", kept, &why))
        parts.error = "cannot rewrite " + (folder / "samples.jsonl").string() + ": " + why;
    return parts;
}

} // namespace

double trainingReward(const TuningScore& score, double speedBonus) {
    if (!score.correct || speedBonus <= 0)
        return score.reward;
    const double speedup =
        score.speedupVsCompile > 0 ? score.speedupVsCompile : score.speedupVsEager;
    if (speedup <= 0)
        return score.reward;
    return score.reward + speedBonus * std::clamp(std::log2(speedup), -1.0, 1.0);
}

std::optional<TuningRunConfig> TuningRunConfig::fromJson(const json& d, std::string* error) {
    TuningRunConfig c;
    if (!d.is_object()) {
        *error = "the run's configuration is not a JSON object";
        return std::nullopt;
    }
    // Every setting toJson writes; anything else is a typo worth refusing.
    static const std::vector<std::string> known = {"train",
                                                   "held_out",
                                                   "spaces",
                                                   "steps",
                                                   "training_seconds",
                                                   "samples_per_space",
                                                   "evaluation_samples",
                                                   "temperature",
                                                   "speed_bonus",
                                                   "epochs",
                                                   "kl",
                                                   "clip_low",
                                                   "clip_high",
                                                   "seed",
                                                   "model",
                                                   "device",
                                                   "lora_rank",
                                                   "lora_alpha",
                                                   "learning_rate",
                                                   "warmup",
                                                   "full",
                                                   "threads",
                                                   "timing",
                                                   "phase_timing",
                                                   "standby",
                                                   "parallel_evaluations",
                                                   "out",
                                                   "save_model"};
    for (const auto& [key, value] : d.items())
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            *error = "unknown setting '" + key + "'";
            return std::nullopt;
        }
    try {
        c.trainSpaces = d.value("train", c.trainSpaces);
        c.heldOutSpaces = d.value("held_out", c.heldOutSpaces);
        c.spacesDirectory = d.value("spaces", c.spacesDirectory);
        c.steps = d.value("steps", c.steps);
        c.trainingSeconds = d.value("training_seconds", c.trainingSeconds);
        c.samplesPerSpace = d.value("samples_per_space", c.samplesPerSpace);
        c.evaluationSamples = d.value("evaluation_samples", c.evaluationSamples);
        c.temperature = d.value("temperature", c.temperature);
        c.speedBonus = d.value("speed_bonus", c.speedBonus);
        c.epochs = d.value("epochs", c.epochs);
        c.klCoefficient = d.value("kl", c.klCoefficient);
        c.clipLow = d.value("clip_low", c.clipLow);
        c.clipHigh = d.value("clip_high", c.clipHigh);
        c.seed = d.value("seed", c.seed);
        c.policy.model = d.value("model", c.policy.model);
        c.policy.device = d.value("device", c.policy.device);
        if (c.policy.device == "auto") // the policy on a GPU where there is one
            c.policy.device = resolveModelDevice(c.policy.device);
        c.policy.loraRank = d.value("lora_rank", c.policy.loraRank);
        c.policy.loraAlpha = d.value("lora_alpha", c.policy.loraAlpha);
        c.policy.learningRate = d.value("learning_rate", c.policy.learningRate);
        c.policy.warmupSteps = d.value("warmup", c.policy.warmupSteps);
        c.policy.fullFineTuning = d.value("full", c.policy.fullFineTuning);
        c.policy.threads = d.value("threads", c.policy.threads);
        c.timing = d.value("timing", c.timing);
        c.phaseTiming = d.value("phase_timing", c.phaseTiming);
        c.standby = d.value("standby", c.standby);
        c.parallelEvaluations = d.value("parallel_evaluations", c.parallelEvaluations);
        c.out = d.value("out", c.out);
        c.saveModel = d.value("save_model", c.saveModel);
    } catch (const json::exception& e) {
        *error = std::string("a setting has the wrong type: ") + e.what();
        return std::nullopt;
    }
    const auto problem = [&]() -> std::string {
        if (c.trainSpaces.empty())
            return "\"train\" needs at least one tuning space";
        if (c.steps < 0 || c.trainingSeconds < 0)
            return "\"steps\" and \"training_seconds\" cannot be negative";
        if (c.samplesPerSpace < 2)
            return "\"samples_per_space\" must be at least 2: GRPO compares samples of a group";
        if (c.evaluationSamples < 0)
            return "\"evaluation_samples\" cannot be negative";
        if (!(c.temperature > 0))
            return "\"temperature\" must be above 0";
        if (c.epochs < 1)
            return "\"epochs\" must be at least 1";
        if (c.policy.device != "cpu" && c.policy.device != "cuda")
            return "\"device\" is cpu, cuda or auto";
        if (!(c.policy.learningRate > 0) || c.policy.loraRank < 1)
            return "\"learning_rate\" and \"lora_rank\" must be positive";
        if (c.policy.threads < 0)
            return "\"threads\" cannot be negative";
        if (c.timing != "quick" && c.timing != "rl")
            return "\"timing\" is quick or rl";
        if (!c.phaseTiming.empty() && c.phaseTiming != "quick" && c.phaseTiming != "rl")
            return "\"phase_timing\" is quick or rl";
        if (c.parallelEvaluations < 1 || c.parallelEvaluations > kMaxParallelEvaluations)
            return "\"parallel_evaluations\" is 1 to " + std::to_string(kMaxParallelEvaluations);
        return {};
    }();
    if (!problem.empty()) {
        *error = problem;
        return std::nullopt;
    }
    return c;
}

json TuningRunConfig::toJson() const {
    return {{"train", trainSpaces},
            {"held_out", heldOutSpaces},
            {"spaces", spacesDirectory},
            {"steps", steps},
            {"training_seconds", trainingSeconds},
            {"samples_per_space", samplesPerSpace},
            {"evaluation_samples", evaluationSamples},
            {"temperature", temperature},
            {"speed_bonus", speedBonus},
            {"epochs", epochs},
            {"kl", klCoefficient},
            {"clip_low", clipLow},
            {"clip_high", clipHigh},
            {"seed", seed},
            {"model", policy.model},
            {"device", policy.device},
            {"lora_rank", policy.loraRank},
            {"lora_alpha", policy.loraAlpha},
            {"learning_rate", policy.learningRate},
            {"warmup", policy.warmupSteps},
            {"full", policy.fullFineTuning},
            {"threads", policy.threads},
            {"timing", timing},
            {"phase_timing", phasesTiming()},
            {"standby", standby},
            {"parallel_evaluations", parallelEvaluations},
            {"out", out},
            {"save_model", saveModel}};
}

bool phasesTimedApart(const TuningRunConfig& config) {
    return config.phasesTiming() != config.timing;
}

EvaluationOptions tuningEvaluationOptions(const TuningRunConfig& config, DeviceChoice device,
                                          bool forPhases) {
    EvaluationOptions options = rlEvaluationOptions();
    if ((forPhases ? config.phasesTiming() : config.timing) == "quick")
        applyQuickFeedback(options);
    options.device = device;
    options.warmWorker = true;
    options.standby = config.standby;
    return options;
}

TuningRunOutcome runKernelTuning(const TuningRunConfig& config,
                                 const std::vector<TuningSpace>& train,
                                 const std::vector<TuningSpace>& heldOut, LocalPolicy& policy,
                                 TuningScorer& scorer, const TuningRunObserver& observer,
                                 std::stop_token stop) {
    return runKernelTuning(config, train, heldOut, policy, scorer, scorer, observer, stop);
}

TuningRunOutcome runKernelTuning(const TuningRunConfig& config,
                                 const std::vector<TuningSpace>& train,
                                 const std::vector<TuningSpace>& heldOut, LocalPolicy& policy,
                                 TuningScorer& scorer, TuningScorer& phaseScorer,
                                 const TuningRunObserver& observer, std::stop_token stop) {
    TuningRunOutcome outcome;
    EarlierParts earlier;
    if (config.resume) {
        earlier = readEarlierParts(config.out);
        if (!earlier.error.empty()) {
            outcome.error = "cannot resume the run in " + config.out + ": " + earlier.error;
            return outcome;
        }
    }
    RunFiles files(config.out);
    if (!config.out.empty())
        std::ofstream(fs::path(config.out) / "config.json") << config.toJson().dump(2) << "\n";
    const auto notify = [&](const json& event) {
        if (observer)
            observer(event);
    };
    const auto runStarted = std::chrono::steady_clock::now();
    // A resumed run draws on from where its rows end, not from its first seeds again.
    const std::uint64_t rowsSoFar = earlier.samples.size();
    std::mt19937_64 random(config.seed + rowsSoFar);
    std::uint64_t samplingSeed = config.seed * 1000003ULL + rowsSoFar;
    // phase -> space -> figures
    std::map<std::string, std::map<std::string, SampleFigures>> phases;
    // Infrastructure failures in a row: past a few, the environment is broken (no GPU, no
    // Python) and the run stops with the reason instead of sampling on without rewards.
    int failuresInARow = 0;
    constexpr int kFailuresBeforeGivingUp = 3;
    const auto tally = [&](const TuningScore& score) -> bool {
        failuresInARow = score.measured ? 0 : failuresInARow + 1;
        if (failuresInARow < kFailuresBeforeGivingUp)
            return true;
        outcome.error = "the evaluation failed " + std::to_string(failuresInARow) +
                        " times in a row, last: " + score.error;
        return false;
    };
    // One scored action: its row in samples.jsonl, its phase's figures; false when the run
    // must stop (tally).
    const auto record = [&](const TuningSpace& space, const std::string& phase, int step,
                            const std::string& action, const TuningScore& score,
                            const std::string& stopReason) -> bool {
        json row = scoreJson(score, config.speedBonus);
        row["phase"] = phase;
        row["step"] = step;
        row["space"] = space.name;
        row["action"] = action;
        if (!stopReason.empty())
            row["stop_reason"] = stopReason;
        files.sample(row);
        if (score.measured)
            phases[phase][space.name].add(action, score, trainingReward(score, config.speedBonus));
        return tally(score);
    };

    // Samples `count` actions of the policy for a space and scores each. Returns false (with
    // outcome.error set) when the policy or the scorer cannot go on.
    struct Scored {
        PolicySample sample;
        TuningScore score;
    };
    const auto samplePolicy = [&](const TuningSpace& space, int count, const std::string& phase,
                                  int step, std::vector<Scored>& scored,
                                  std::vector<std::int32_t>& prompt) -> bool {
        PolicySampling sampling;
        sampling.count = count;
        sampling.temperature = config.temperature;
        sampling.grammar = space.grammar();
        // Room for the longest action: every knob's longest name=choice and a space, in
        // tokens of at least one byte, plus the end token.
        sampling.maxTokens = int(sampling.grammar.size()) + 8;
        sampling.seed = samplingSeed++;
        const PolicyGroup group = policy.sample(space.systemPrompt(), space.userPrompt(), sampling);
        if (!group.error.empty()) {
            outcome.error = "sampling for " + space.name + ": " + group.error;
            return false;
        }
        prompt = group.promptTokens;
        // Parse every sample, then score the group's actions together (side by side where the
        // scorer can), then record them in the order sampled.
        std::vector<TuningSpace::Action> actions;
        std::vector<std::optional<std::size_t>> actionOf(group.samples.size());
        for (std::size_t i = 0; i < group.samples.size(); ++i)
            if (const auto action = space.parseAction(group.samples[i].text)) {
                actionOf[i] = actions.size();
                actions.push_back(*action);
            }
        TuningScorer& judge = phase == "train" ? scorer : phaseScorer;
        const std::vector<TuningScore> scores = judge.scoreAll(space, actions, stop);
        for (std::size_t i = 0; i < group.samples.size(); ++i) {
            const PolicySample& s = group.samples[i];
            TuningScore score;
            if (actionOf[i]) {
                score = scores[*actionOf[i]];
            } else {
                // Only a cut-off reply can miss the grammar; it is the policy's own failure.
                score.measured = true;
                score.verdict = "not an action (" + s.stopReason + ")";
            }
            // A sample the stop cut off was not scored: it stays out of the files, and a
            // resumed run samples it again.
            if (stop.stop_requested() && !score.measured)
                return true;
            scored.push_back({s, score});
            if (!record(space, phase, step, s.text, score, s.stopReason))
                return false;
        }
        notify({{"event", "sampled"},
                {"phase", phase},
                {"step", step},
                {"space", space.name},
                {"samples", group.samples.size()},
                {"sampling_seconds", group.seconds},
                {"tokens_per_second", group.tokensPerSecond}});
        return true;
    };
    const auto sampleRandom = [&](const TuningSpace& space, int count) -> bool {
        std::vector<TuningSpace::Action> actions;
        for (int i = 0; i < count; ++i)
            actions.push_back(space.randomAction(random));
        const std::vector<TuningScore> scores = phaseScorer.scoreAll(space, actions, stop);
        for (std::size_t i = 0; i < actions.size(); ++i) {
            if (stop.stop_requested() && !scores[i].measured)
                return true; // not scored: a resumed run draws it again
            if (!record(space, "random", 0, space.actionText(actions[i]), scores[i], ""))
                return false;
        }
        return true;
    };
    std::vector<const TuningSpace*> everySpace;
    for (const auto& s : train)
        everySpace.push_back(&s);
    for (const auto& s : heldOut)
        everySpace.push_back(&s);
    // space name -> samples a phase already has (from the earlier parts of a resumed run)
    std::map<std::string, std::map<std::string, int>> sampledBefore;
    const auto evaluatePolicy = [&](const std::string& phase) -> bool {
        notify({{"event", "phase"}, {"phase", phase}});
        for (const TuningSpace* space : everySpace) {
            std::vector<Scored> scored;
            std::vector<std::int32_t> prompt;
            const int wanted = config.evaluationSamples - sampledBefore[phase][space->name];
            if (wanted > 0 && !samplePolicy(*space, wanted, phase, 0, scored, prompt))
                return false;
            if (stop.stop_requested())
                return true;
        }
        return true;
    };

    const std::string checkpointPath =
        config.out.empty() ? std::string() : (fs::path(config.out) / "checkpoint.pt").string();
    if (config.resume) {
        for (const json& row : earlier.samples) {
            const auto space =
                std::find_if(everySpace.begin(), everySpace.end(), [&](const TuningSpace* s) {
                    return s->name == row.value("space", "");
                });
            if (space == everySpace.end())
                continue; // a space this part no longer runs
            const std::string phase = row.value("phase", "");
            const std::string action = row.value("action", "");
            const TuningScore score = tuningScoreFromRow(row);
            ++sampledBefore[phase][(*space)->name];
            if (!score.measured)
                continue;
            if (phase != "train")
                phases[phase][(*space)->name].add(action, score,
                                                  trainingReward(score, config.speedBonus));
            if (const auto parsed = (*space)->parseAction(action))
                (phase == "train" ? scorer : phaseScorer).remember(**space, *parsed, score);
        }
        if (earlier.steps > 0) {
            if (std::string why = policy.restore(checkpointPath); !why.empty()) {
                outcome.error =
                    "cannot resume after step " + std::to_string(earlier.steps) + ": " + why;
                return outcome;
            }
        }
        notify({{"event", "resumed"},
                {"after_step", earlier.steps},
                {"samples", earlier.samples.size()}});
    }

    if (!evaluatePolicy("start"))
        return outcome;
    notify({{"event", "phase"}, {"phase", "random"}});
    for (const TuningSpace* space : everySpace)
        if (!sampleRandom(*space, config.evaluationSamples - sampledBefore["random"][space->name]))
            return outcome;

    int stepsTaken = 0;
    for (int step = earlier.steps + 1; step <= config.steps && !stop.stop_requested(); ++step) {
        const auto started = std::chrono::steady_clock::now();
        if (config.trainingSeconds > 0 &&
            std::chrono::duration<double>(started - runStarted).count() > config.trainingSeconds) {
            notify({{"event", "time_limit"}, {"steps_taken", stepsTaken}});
            break;
        }
        ++stepsTaken;
        json episodes = json::array();
        SampleFigures figures;
        int infrastructureFailures = 0;
        double samplingSeconds = 0;
        for (std::size_t g = 0; g < train.size(); ++g) {
            std::vector<Scored> scored;
            std::vector<std::int32_t> prompt;
            const auto sampling = std::chrono::steady_clock::now();
            if (!samplePolicy(train[g], config.samplesPerSpace, "train", step, scored, prompt))
                return outcome;
            samplingSeconds +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - sampling).count();
            for (const Scored& s : scored) {
                if (!s.score.measured) {
                    // No reward to learn from: the sample stays out of the batch.
                    ++infrastructureFailures;
                    continue;
                }
                figures.add(s.sample.text, s.score, trainingReward(s.score, config.speedBonus));
                episodes.push_back({{"prompt_tokens", prompt},
                                    {"tokens", s.sample.tokens},
                                    {"logprobs", s.sample.logprobs},
                                    {"reward", trainingReward(s.score, config.speedBonus)},
                                    {"group", g}});
            }
        }
        if (stop.stop_requested())
            break;
        json update = {{"skipped", "no measured samples"}};
        if (!episodes.empty()) {
            update = policy.grpoStep(episodes, {{"clip_low", config.clipLow},
                                                {"clip_high", config.clipHigh},
                                                {"kl", config.klCoefficient},
                                                {"epochs", config.epochs}});
            if (update.contains("error")) {
                outcome.error = "training step " + std::to_string(step) + ": " +
                                update["error"].get<std::string>();
                return outcome;
            }
        }
        json row = figures.toJson();
        // The training state after this step, before its row: a crash between the two leaves
        // the step to be taken again on resume, on a policy one update further.
        if (!checkpointPath.empty() && !episodes.empty())
            if (std::string why = policy.checkpoint(checkpointPath); !why.empty())
                row["checkpoint_error"] = why;
        row["step"] = step;
        row["infrastructure_failures"] = infrastructureFailures;
        row["update"] = update;
        row["seconds"] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        row["sampling_and_scoring_seconds"] = samplingSeconds;
        files.step(row);
        json event = row;
        event["event"] = "step";
        notify(event);
    }
    if (stop.stop_requested()) {
        outcome.stopped = true;
    } else if (!evaluatePolicy("final")) {
        return outcome;
    }

    json summary = {
        {"spaces", json::object()},
        {"stopped", outcome.stopped},
        {"steps_taken", earlier.steps + stepsTaken},
        {"seconds",
         std::chrono::duration<double>(std::chrono::steady_clock::now() - runStarted).count()}};
    if (config.resume)
        summary["resumed_after_step"] = earlier.steps;
    for (const TuningSpace* space : everySpace) {
        json perSpace = {{"held_out", std::find_if(heldOut.begin(), heldOut.end(),
                                                   [&](auto& h) {
                                                       return h.name == space->name;
                                                   }) != heldOut.end()},
                         {"actions", space->actionCount()}};
        for (const char* phase : {"start", "random", "final"})
            if (phases[phase].count(space->name))
                perSpace[phase] = phases[phase][space->name].toJson();
        summary["spaces"][space->name] = perSpace;
    }
    if (config.saveModel && !config.out.empty() && !outcome.stopped) {
        const std::string folder = (fs::path(config.out) / "model").string();
        if (std::string error = policy.save(folder); !error.empty())
            summary["save_error"] = error;
        else
            summary["model"] = folder;
    }
    if (!config.out.empty())
        std::ofstream(fs::path(config.out) / "summary.json") << summary.dump(2) << "\n";
    outcome.summary = summary;
    notify({{"event", "summary"}, {"summary", summary}});
    return outcome;
}

} // namespace kwb
