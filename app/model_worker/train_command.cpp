#include "train_command.h"

#include "engine/model/model_files.h"
#include "engine/model/training_conversation.h"
#include "engine/torch/llama_model.h"
#include "engine/torch/policy_trainer.h"
#include "save_trained_model.h"
#include "step_json.h"
#include "training_options.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

namespace kwb::modelworker {
namespace {

namespace fs = std::filesystem;
using torchnn::TrainingSequence;

struct SftSettings {
    std::string model, data, out, device = "cpu";
    int steps = 0; // 0: one pass over the data
    int batchSize = 4;
    int maxTokens = 0; // 0: the model's context
    bool full = false;
    torchnn::LoraSettings lora;
    torchnn::OptimiserSettings optimiser;
};

[[noreturn]] void fail(const std::string& message, int code = 1) {
    std::cerr << "kwb-model train: " << message << "\n";
    std::exit(code);
}

// The data's usable rows as training sequences; each row that cannot be used is named on
// standard error with its reason, and the rest still train.
std::vector<TrainingSequence> readConversations(const SftSettings& s,
                                                const model::BpeTokenizer& tokenizer,
                                                const model::ChatTemplate& chat, int context) {
    std::ifstream in(s.data);
    if (!in)
        fail("cannot read " + s.data);
    std::vector<TrainingSequence> sequences;
    std::string line;
    int lineNumber = 0, skipped = 0;
    const std::size_t limit =
        std::size_t(s.maxTokens > 0 ? std::min(s.maxTokens, context) : context);
    while (std::getline(in, line)) {
        ++lineNumber;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        const nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
        const model::TokenizedConversation c =
            row.is_discarded() ? model::TokenizedConversation{{}, {}, "not JSON"}
                               : model::tokenizeConversation(row, tokenizer, chat);
        if (!c.error.empty()) {
            std::cerr << s.data << ":" << lineNumber << ": skipped: " << c.error << "\n";
            ++skipped;
            continue;
        }
        TrainingSequence sequence;
        sequence.tokens = c.tokens;
        sequence.trained = c.trained;
        if (sequence.tokens.size() > limit) {
            // Kept up to the context; what is cut is said, not silently lost.
            std::cerr << s.data << ":" << lineNumber << ": " << sequence.tokens.size()
                      << " tokens, cut to " << limit << "\n";
            sequence.tokens.resize(limit);
            sequence.trained.resize(limit);
        }
        sequences.push_back(std::move(sequence));
    }
    if (sequences.empty())
        fail(s.data + " has no usable conversation (" + std::to_string(skipped) + " skipped)", 2);
    return sequences;
}

void runSft(const SftSettings& s) {
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
    const std::vector<TrainingSequence> data =
        readConversations(s, *tokenizer.tokenizer, *chat, model.config().context);
    torchnn::LoraSettings lora = s.lora;
    lora.enabled = !s.full;
    torchnn::PolicyTrainer trainer(model, lora, s.optimiser);
    if (!trainer.error().empty())
        fail(trainer.error(), 2);
    const int batch = std::max(1, s.batchSize);
    const int steps =
        s.steps > 0 ? s.steps : int((data.size() + std::size_t(batch) - 1) / std::size_t(batch));
    std::cout << nlohmann::json{{"event", "start"},
                                {"model", model.describe()},
                                {"conversations", data.size()},
                                {"steps", steps},
                                {"trainable_parameters", trainer.trainableParameters()}}
                     .dump()
              << std::endl;
    std::size_t next = 0;
    for (int step = 0; step < steps; ++step) {
        std::vector<TrainingSequence> chunk;
        for (int i = 0; i < batch; ++i)
            chunk.push_back(data[next++ % data.size()]);
        const torchnn::TrainingStep r = trainer.supervisedStep(chunk);
        nlohmann::json line = stepJson(r);
        line["event"] = "step";
        std::cout << line.dump() << std::endl;
    }
    if (!s.out.empty())
        if (std::string saveError; !saveTrainedModel(model, s.model, *tokenizer.tokenizer, s.out,
                                                     "kwb-model train sft", &saveError))
            fail(saveError);
    std::cout << nlohmann::json{{"event", "done"}, {"steps", steps}, {"saved", s.out}}.dump()
              << std::endl;
}

} // namespace

void addTrainCommand(CLI::App& app) {
    auto settings = std::make_shared<SftSettings>();
    auto* train = app.add_subcommand("train", "Train a local model");
    train->require_subcommand(1);
    auto* sft = train->add_subcommand(
        "sft", "Supervised fine-tuning on exported conversations (`kwb export rft|verl-sft`): "
               "the loss on the assistant turns the rows' loss_mask marks; one JSON line per "
               "step; the trained model (adapters merged) saved as a Hugging Face folder");
    sft->add_option("model", settings->model, "GGUF file or model folder")->required();
    sft->add_option("--data", settings->data, "JSON lines with messages and loss_mask")->required();
    sft->add_option("--out", settings->out, "Folder for the trained model (must not exist)");
    sft->add_option("--device", settings->device, "cpu or cuda")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    sft->add_option("--steps", settings->steps, "Optimiser steps (default: one pass)")
        ->check(CLI::NonNegativeNumber);
    sft->add_option("--batch-size", settings->batchSize, "Conversations per step (4)")
        ->check(CLI::PositiveNumber);
    sft->add_option("--max-tokens", settings->maxTokens, "Cut conversations to this many tokens")
        ->check(CLI::NonNegativeNumber);
    addTrainingOptions(sft, settings->optimiser, settings->lora, settings->full);
    sft->callback([settings] { runSft(*settings); });
}

} // namespace kwb::modelworker
