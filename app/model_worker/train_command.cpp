#include "train_command.h"

#include "engine/model/model_files.h"
#include "engine/model/training_conversation.h"
#include "engine/torch/llama_model.h"
#include "engine/torch/policy_trainer.h"
#include "save_trained_model.h"
#include "step_json.h"
#include "training_options.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

namespace kwb::modelworker {
namespace {

namespace fs = std::filesystem;
using torchnn::TrainingSequence;

// What `kwb-model train` runs: supervised fine-tuning (SFT / RFT), GRPO, value pretraining of
// PPO's critic, or PPO (value pretraining first when asked, in the same process).
enum class Algorithm { Sft, Grpo, Value, Ppo };

const char* algorithmName(Algorithm a) {
    switch (a) {
    case Algorithm::Sft:
        return "sft";
    case Algorithm::Grpo:
        return "grpo";
    case Algorithm::Value:
        return "value";
    case Algorithm::Ppo:
        return "ppo";
    }
    return "sft";
}

struct TrainSettings {
    Algorithm algorithm = Algorithm::Sft;
    std::string model, data, out, device = "cpu";
    int steps = 0; // 0: one pass over the data
    int batchSize = 4;
    int maxTokens = 0; // 0: the model's context
    bool full = false;
    bool gradientCheckpointing = false;
    torchnn::LoraSettings lora;
    torchnn::OptimiserSettings optimiser;
    // Reinforcement learning (grpo, value, ppo).
    torchnn::PolicyUpdateSettings update;
    torchnn::CriticSettings critic;
    int valueSteps = 0; // ppo: value pretraining steps before the first policy step
    std::string checkpointIn, checkpointOut;
    std::string stepsOut; // every step's line appended here too, flushed, for a live view
};

[[noreturn]] void fail(const std::string& message, int code = 1) {
    std::cerr << "kwb-model train: " << message << "\n";
    std::exit(code);
}

bool needsRewards(Algorithm a) {
    return a != Algorithm::Sft;
}

// The data's usable rows as training sequences; each row that cannot be used is named on
// standard error with its reason, and the rest still train. RL rows need a "reward"; the
// episodes of one task ("extra_info.task", as `kwb export` writes it) form one group.
std::vector<TrainingSequence> readConversations(const TrainSettings& s,
                                                const model::BpeTokenizer& tokenizer,
                                                const model::ChatTemplate& chat, int context) {
    std::ifstream in(s.data);
    if (!in)
        fail("cannot read " + s.data);
    std::vector<TrainingSequence> sequences;
    std::map<std::string, std::int64_t> groups;
    std::string line;
    int lineNumber = 0, skipped = 0;
    const std::size_t limit =
        std::size_t(s.maxTokens > 0 ? std::min(s.maxTokens, context) : context);
    const auto skip = [&](const std::string& why) {
        std::cerr << s.data << ":" << lineNumber << ": skipped: " << why << "\n";
        ++skipped;
    };
    while (std::getline(in, line)) {
        ++lineNumber;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        const nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
        if (row.is_discarded()) {
            skip("not JSON");
            continue;
        }
        const model::TokenizedConversation c = model::tokenizeConversation(row, tokenizer, chat);
        if (!c.error.empty()) {
            skip(c.error);
            continue;
        }
        TrainingSequence sequence;
        if (needsRewards(s.algorithm)) {
            if (!row.contains("reward") || !row["reward"].is_number()) {
                skip("no \"reward\"");
                continue;
            }
            sequence.reward = row["reward"].get<double>();
            const nlohmann::json info = row.value("extra_info", nlohmann::json::object());
            const std::string task =
                info.is_object() && info.contains("task") && info["task"].is_string()
                    ? info["task"].get<std::string>()
                    : std::string();
            sequence.group = groups.emplace(task, std::int64_t(groups.size())).first->second;
        }
        sequence.tokens = c.tokens;
        sequence.trained = c.trained;
        sequence.sampledLogprobs = c.sampledLogprobs;
        if (sequence.tokens.size() > limit) {
            // Kept up to the context; what is cut is said, not silently lost.
            std::cerr << s.data << ":" << lineNumber << ": " << sequence.tokens.size()
                      << " tokens, cut to " << limit << "\n";
            sequence.tokens.resize(limit);
            sequence.trained.resize(limit);
            if (!sequence.sampledLogprobs.empty())
                sequence.sampledLogprobs.resize(limit);
        }
        if (std::find(sequence.trained.begin(), sequence.trained.end(), 1) ==
            sequence.trained.end()) {
            skip("no trained token within " + std::to_string(limit) + " tokens");
            continue;
        }
        sequences.push_back(std::move(sequence));
    }
    if (sequences.empty())
        fail(s.data + " has no usable conversation (" + std::to_string(skipped) + " skipped)", 2);
    // GRPO compares the episodes of one task: a group's rows stay together in a batch.
    if (s.algorithm == Algorithm::Grpo)
        std::stable_sort(
            sequences.begin(), sequences.end(),
            [](const TrainingSequence& a, const TrainingSequence& b) { return a.group < b.group; });
    return sequences;
}

class StepLog {
public:
    explicit StepLog(const std::string& path) {
        if (!path.empty()) {
            file_.open(path, std::ios::app);
            if (!file_)
                fail("cannot write " + path);
        }
    }
    void write(const nlohmann::json& line) {
        const std::string text =
            line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        std::cout << text << std::endl;
        if (file_.is_open())
            file_ << text << std::endl;
    }

private:
    std::ofstream file_;
};

void runTraining(const TrainSettings& s) {
    const auto tokenizer = model::loadTokenizer(s.model);
    if (!tokenizer)
        fail(tokenizer.error);
    std::string error;
    const auto chat = model::loadChatTemplate(s.model, &error);
    if (!chat)
        fail("the model's chat template: " + error);
    if (!s.out.empty() && fs::exists(s.out) && !fs::is_empty(s.out))
        fail(s.out + " exists and is not empty");
    auto loaded = torchnn::LlamaModel::load(s.model, s.device);
    if (!loaded)
        fail(loaded.error);
    torchnn::LlamaModel& model = *loaded.model;
    // Before the trainer: the critic's network is a copy of this one and keeps the setting.
    model.setGradientCheckpointing(s.gradientCheckpointing);
    const std::vector<TrainingSequence> data =
        readConversations(s, *tokenizer.tokenizer, *chat, model.config().context);
    torchnn::LoraSettings lora = s.lora;
    lora.enabled = !s.full;
    torchnn::PolicyTrainer trainer(model, lora, s.optimiser);
    if (!trainer.error().empty())
        fail(trainer.error(), 2);
    const bool critic = s.algorithm == Algorithm::Value || s.algorithm == Algorithm::Ppo;
    if (critic)
        if (const std::string why = trainer.enableCritic(s.critic); !why.empty())
            fail(why, 2);
    if (!s.checkpointIn.empty())
        if (const std::string why = trainer.loadCheckpoint(s.checkpointIn); !why.empty())
            fail(why, 2);
    const int batch = std::max(1, s.batchSize);
    const int steps =
        s.steps > 0 ? s.steps : int((data.size() + std::size_t(batch) - 1) / std::size_t(batch));
    const int valueSteps = s.algorithm == Algorithm::Ppo ? s.valueSteps : 0;
    StepLog log(s.stepsOut);
    log.write({{"event", "start"},
               {"algorithm", algorithmName(s.algorithm)},
               {"model", model.describe()},
               {"conversations", data.size()},
               {"groups", data.empty() ? 0 : data.back().group + 1},
               {"steps", steps},
               {"value_steps", valueSteps},
               {"trainable_parameters", trainer.trainableParameters()}});
    std::size_t next = 0;
    const auto nextBatch = [&] {
        std::vector<TrainingSequence> chunk;
        for (int i = 0; i < batch; ++i)
            chunk.push_back(data[next++ % data.size()]);
        return chunk;
    };
    for (int step = 0; step < valueSteps; ++step) {
        nlohmann::json line = stepJson(trainer.valueStep(nextBatch()));
        line["event"] = "step";
        line["phase"] = "value";
        log.write(line);
    }
    for (int step = 0; step < steps; ++step) {
        const std::vector<TrainingSequence> chunk = nextBatch();
        torchnn::TrainingStep r;
        switch (s.algorithm) {
        case Algorithm::Sft:
            r = trainer.supervisedStep(chunk);
            break;
        case Algorithm::Grpo:
            r = trainer.groupPolicyStep(chunk, s.update);
            break;
        case Algorithm::Value:
            r = trainer.valueStep(chunk);
            break;
        case Algorithm::Ppo:
            r = trainer.ppoStep(chunk, s.update);
            break;
        }
        nlohmann::json line = stepJson(r);
        line["event"] = "step";
        line["phase"] = s.algorithm == Algorithm::Value ? "value"
                        : s.algorithm == Algorithm::Sft ? "supervised"
                                                        : "policy";
        log.write(line);
    }
    if (!s.checkpointOut.empty())
        if (const std::string why = trainer.saveCheckpoint(s.checkpointOut); !why.empty())
            fail(why);
    // Value pretraining leaves the policy as it was: its result is the checkpoint's critic.
    const bool savesModel = !s.out.empty() && s.algorithm != Algorithm::Value;
    if (savesModel)
        if (std::string saveError; !saveTrainedModel(
                model, s.model, *tokenizer.tokenizer, s.out,
                std::string("kwb-model train ") + algorithmName(s.algorithm), &saveError))
            fail(saveError);
    log.write({{"event", "done"},
               {"steps", steps},
               {"saved", savesModel ? s.out : std::string()},
               {"checkpoint", s.checkpointOut}});
}

void addRlOptions(CLI::App* command, TrainSettings& s, bool critic) {
    command->add_option("--epochs", s.update.epochs, "Passes over each batch (1)")
        ->check(CLI::PositiveNumber);
    command->add_option("--clip-low", s.update.clipLow, "The ratio's clip below 1 (0.2)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--clip-high", s.update.clipHigh, "The ratio's clip above 1 (0.28)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--kl", s.update.klCoefficient, "KL penalty to the starting policy (0)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--entropy", s.update.entropyCoefficient, "Entropy bonus (0)")
        ->check(CLI::NonNegativeNumber);
    if (!critic)
        return;
    command->add_option("--critic-learning-rate", s.critic.learningRate, "The critic's (1e-4)")
        ->check(CLI::PositiveNumber);
    command->add_option("--critic-rank", s.critic.rank, "The critic's LoRA rank (16)")
        ->check(CLI::PositiveNumber);
    command->add_option("--value-clip", s.critic.valueClip, "The value loss's clip (0.2; 0: off)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--gamma", s.critic.gamma, "Discount (1)")->check(CLI::Range(0.0, 1.0));
    command->add_option("--lambda", s.critic.lambda, "GAE's lambda (0.95)")
        ->check(CLI::Range(0.0, 1.0));
}

} // namespace

void addTrainCommand(CLI::App& app) {
    auto* train = app.add_subcommand("train", "Train a local model");
    train->require_subcommand(1);
    const auto add = [train](Algorithm algorithm, const std::string& description) {
        auto settings = std::make_shared<TrainSettings>();
        settings->algorithm = algorithm;
        auto* command = train->add_subcommand(algorithmName(algorithm), description);
        command->add_option("model", settings->model, "GGUF file or model folder")->required();
        command
            ->add_option("--data", settings->data,
                         "JSON lines with messages and loss_mask (RL: and reward; "
                         "sampled_tokens are trained as drawn)")
            ->required();
        command->add_option("--out", settings->out,
                            "Folder for the trained model (must not exist)");
        command->add_option("--device", settings->device, "cpu or cuda")
            ->check(CLI::IsMember({"cpu", "cuda"}));
        command->add_option("--steps", settings->steps, "Optimiser steps (default: one pass)")
            ->check(CLI::NonNegativeNumber);
        command->add_option("--batch-size", settings->batchSize, "Conversations per step (4)")
            ->check(CLI::PositiveNumber);
        command
            ->add_option("--max-tokens", settings->maxTokens,
                         "Cut conversations to this many tokens")
            ->check(CLI::NonNegativeNumber);
        command->add_option("--steps-out", settings->stepsOut,
                            "Append every step's JSON line to this file as well");
        command->add_option("--checkpoint-in", settings->checkpointIn,
                            "Start from a checkpoint (adapters, optimiser, critic)");
        command->add_option("--checkpoint-out", settings->checkpointOut,
                            "Save the training state when done (value: the pretrained critic)");
        addTrainingOptions(command, settings->optimiser, settings->lora, settings->full,
                           settings->gradientCheckpointing);
        if (algorithm != Algorithm::Sft)
            addRlOptions(command, *settings,
                         algorithm == Algorithm::Value || algorithm == Algorithm::Ppo);
        if (algorithm == Algorithm::Ppo)
            command
                ->add_option("--value-steps", settings->valueSteps,
                             "Value pretraining steps before the first policy step (0)")
                ->check(CLI::NonNegativeNumber);
        command->callback([settings] { runTraining(*settings); });
    };
    add(Algorithm::Sft,
        "Supervised fine-tuning on exported conversations (`kwb export rft|verl-sft`): the loss "
        "on the assistant turns the rows' loss_mask marks; one JSON line per step; the trained "
        "model (adapters merged) saved as a Hugging Face folder");
    add(Algorithm::Grpo,
        "GRPO on scored episodes (`kwb export verl-sft`): advantages relative to the other "
        "episodes of the same task, the asymmetric clipped policy loss");
    add(Algorithm::Value,
        "Value pretraining of PPO's critic on scored episodes, the policy untouched: the "
        "checkpoint (--checkpoint-out) holds the critic");
    add(Algorithm::Ppo,
        "PPO on scored episodes: the reward on each episode's last model token, GAE with the "
        "critic's values (gamma 1, lambda 0.95), both clipped losses; --value-steps pretrains "
        "the critic first, --checkpoint-in starts from `train value`'s");
}

} // namespace kwb::modelworker
