#include "serve_command.h"

#include "engine/model/bpe_tokenizer.h"
#include "engine/model/chat_template.h"
#include "engine/model/choice_grammar.h"
#include "engine/model/model_files.h"
#include "engine/model/tool_call_text.h"
#include "engine/torch/llama_model.h"
#include "engine/torch/policy_trainer.h"
#include "save_trained_model.h"
#include "step_json.h"
#include "training_options.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <unistd.h>

namespace kwb::modelworker {
namespace {

using nlohmann::json;

struct ServeSettings {
    std::string model, device = "cpu";
    bool float32 = false;
    bool full = false;
    bool gradientCheckpointing = false;
    torchnn::LoraSettings lora;
    torchnn::OptimiserSettings optimiser;
};

// Lines in and out on one descriptor pair; a request line is at most 64 MiB.
class LineChannel {
public:
    LineChannel() {
        if (fcntl(3, F_GETFD) != -1)
            in_ = out_ = 3;
    }
    std::optional<std::string> read() {
        for (;;) {
            const std::size_t newline = pending_.find('\n');
            if (newline != std::string::npos) {
                std::string line = pending_.substr(0, newline);
                pending_.erase(0, newline + 1);
                return line;
            }
            if (pending_.size() > (std::size_t(64) << 20))
                return std::nullopt;
            char buffer[65536];
            const ssize_t n = ::read(in_, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return std::nullopt;
            pending_.append(buffer, std::size_t(n));
        }
    }
    bool write(const json& reply) {
        const std::string line = reply.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
        std::size_t sent = 0;
        while (sent < line.size()) {
            const ssize_t n = ::write(out_, line.data() + sent, line.size() - sent);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return false;
            sent += std::size_t(n);
        }
        return true;
    }

private:
    int in_ = 0, out_ = 1;
    std::string pending_;
};

class PolicyServer {
public:
    explicit PolicyServer(const ServeSettings& settings) : settings_(settings) {}

    // Loads the model, its tokenizer and chat template; the reply that says so or why not.
    json start() {
        auto tokenizer = model::loadTokenizer(settings_.model);
        if (!tokenizer)
            return {{"error", tokenizer.error}};
        tokenizer_ = std::move(tokenizer.tokenizer);
        std::string error;
        auto chat = model::loadChatTemplate(settings_.model, &error);
        if (!chat)
            return {{"error", "the model's chat template: " + error}};
        chat_ = std::move(*chat);
        auto loaded =
            torchnn::LlamaModel::load(settings_.model, settings_.device, settings_.float32);
        if (!loaded)
            return {{"error", loaded.error}};
        model_ = std::move(loaded.model);
        model_->setGradientCheckpointing(settings_.gradientCheckpointing);
        torchnn::LoraSettings lora = settings_.lora;
        lora.enabled = !settings_.full;
        trainer_ = std::make_unique<torchnn::PolicyTrainer>(*model_, lora, settings_.optimiser);
        if (!trainer_->error().empty())
            return {{"error", trainer_->error()}};
        tokenBytes_ = model::tokenByteTable(*tokenizer_);
        if (const auto end = tokenizer_->tokenId(chat_->endOfTurn()))
            endOfTurn_ = *end;
        return {{"ready", true},
                {"model", model_->describe()},
                {"vocabulary", model_->vocabulary()},
                {"trainable_parameters", trainer_->trainableParameters()}};
    }

    json handle(const json& request) {
        const std::string op = request.value("op", "");
        if (op == "sample")
            return sample(request);
        if (op == "grpo")
            return grpo(request);
        if (op == "save")
            return save(request);
        if (op == "checkpoint")
            return checkpoint(request);
        if (op == "restore")
            return restore(request);
        return {
            {"error", "unknown op '" + op + "' (sample, grpo, save, checkpoint, restore, quit)"}};
    }

private:
    json sample(const json& r) {
        // OpenAI-style messages (tool calls and tool results included) and the tools offered,
        // rendered as training renders them (model::conversationTurns).
        const json tools = r.value("tools", json::array());
        std::string turnError;
        const std::vector<model::ChatTurn> turns =
            model::conversationTurns(r.value("messages", json::array()), tools, *chat_, &turnError);
        if (turns.empty())
            return {{"error", turnError.empty() ? "sample needs messages" : turnError}};
        const std::vector<model::TokenId> prompt =
            tokenizer_->encode(chat_->render(turns, /*generationPrompt=*/true));
        // Positions past the context were never trained: the caller prunes and asks again.
        const int context = model_->config().context;
        if (context > 0 && std::int64_t(prompt.size()) >= context)
            return {{"error", "the conversation is " + std::to_string(prompt.size()) +
                                  " tokens; the model's context holds " + std::to_string(context)},
                    {"error_kind", "context_too_long"},
                    {"prompt_token_count", prompt.size()}};
        torchnn::LlamaModel::GenerationOptions options;
        options.maxTokens = r.value("max_tokens", 64);
        options.temperature = r.value("temperature", 1.0);
        options.topP = r.value("top_p", 1.0);
        options.topK = r.value("top_k", 0);
        options.seed = r.value("seed", std::uint64_t(0));
        // ignore_eos: exactly max_tokens per reply, as a throughput measurement needs.
        const bool ignoreEos = r.value("ignore_eos", false);
        if (endOfTurn_ >= 0 && !ignoreEos)
            options.stopIds.push_back(endOfTurn_);
        if (const auto eos = tokenizer_->eos(); eos && *eos != endOfTurn_ && !ignoreEos)
            options.stopIds.push_back(*eos);
        const int count = std::max(1, r.value("count", 1));
        std::optional<model::ChoiceGrammar> grammar;
        std::vector<std::unique_ptr<model::GrammarMatcher>> matchers;
        std::vector<model::TokenConstraint*> constraints;
        if (const std::string text = r.value("grammar", ""); !text.empty()) {
            std::string error;
            grammar = model::ChoiceGrammar::parse(text, &error);
            if (!grammar)
                return {{"error", "grammar: " + error}};
            if (ignoreEos)
                return {{"error", "a grammar ends its replies: ignore_eos cannot go with it"}};
            if (endOfTurn_ < 0)
                return {{"error", "the model has no end-of-turn token to end a grammar with"}};
            for (int i = 0; i < count; ++i) {
                matchers.push_back(
                    std::make_unique<model::GrammarMatcher>(*grammar, tokenBytes_, endOfTurn_));
                constraints.push_back(matchers.back().get());
            }
        }
        const auto started = std::chrono::steady_clock::now();
        const auto group = model_->generateGroup(prompt, count, options, constraints);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        std::vector<std::string> stops;
        for (const json& stop : r.value("stop", json::array()))
            if (stop.is_string() && !stop.get<std::string>().empty())
                stops.push_back(stop.get<std::string>());
        const bool tokenTexts = r.value("token_texts", false);
        json samples = json::array();
        std::size_t generated = 0;
        for (auto g : group) {
            if (!stops.empty())
                cutAtStopSequence(g, stops);
            std::vector<model::TokenId> text = g.tokens;
            if (!text.empty() && g.stopReason == "stop_token")
                text.pop_back();
            generated += g.tokens.size();
            json sample = {{"text", tokenizer_->decode(text)},
                           {"tokens", g.tokens},
                           {"logprobs", g.logprobs},
                           {"stop_reason", g.stopReason}};
            if (g.stopReason == "stop_sequence")
                sample["text"] = textBeforeStop(sample["text"].get<std::string>(), stops);
            if (tokenTexts) {
                json pieces = json::array();
                for (const model::TokenId id : g.tokens)
                    pieces.push_back(tokenizer_->decode(std::vector<model::TokenId>{id}));
                sample["token_texts"] = std::move(pieces);
            }
            if (!tools.empty()) {
                const model::ParsedReply reply =
                    model::parseToolCalls(sample["text"].get<std::string>());
                json calls = json::array();
                for (const model::ParsedToolCall& call : reply.calls)
                    calls.push_back({{"name", call.name}, {"arguments", call.argumentsJson}});
                sample["content"] = reply.content;
                sample["tool_calls"] = std::move(calls);
            }
            samples.push_back(std::move(sample));
        }
        return {{"prompt_tokens", prompt},
                {"samples", samples},
                {"seconds", seconds},
                {"prefill_seconds", group.empty() ? 0.0 : group.front().prefillSeconds},
                {"decode_seconds", group.empty() ? 0.0 : group.front().decodeSeconds},
                {"decoding", group.empty() ? std::string() : group.front().decoding},
                {"generated_tokens", generated},
                {"tokens_per_second", seconds > 0 ? double(generated) / seconds : 0.0}};
    }

    // Ends a reply at the first token whose text completes a stop sequence (the shortest prefix
    // whose decoded text holds one: found by halving, as holding one only grows with length), so
    // the tokens and log-probabilities kept are exactly those of the text returned.
    void cutAtStopSequence(torchnn::LlamaModel::Generation& g,
                           const std::vector<std::string>& stops) const {
        const auto holdsStop = [&](std::size_t count) {
            const std::string text = tokenizer_->decode(std::vector<model::TokenId>(
                g.tokens.begin(), g.tokens.begin() + std::ptrdiff_t(count)));
            return std::any_of(stops.begin(), stops.end(), [&](const std::string& stop) {
                return text.find(stop) != std::string::npos;
            });
        };
        if (g.tokens.empty() || !holdsStop(g.tokens.size()))
            return;
        std::size_t low = 1, high = g.tokens.size();
        while (low < high) {
            const std::size_t middle = (low + high) / 2;
            if (holdsStop(middle))
                high = middle;
            else
                low = middle + 1;
        }
        g.tokens.resize(low);
        g.logprobs.resize(low);
        g.stopReason = "stop_sequence";
    }

    static std::string textBeforeStop(const std::string& text,
                                      const std::vector<std::string>& stops) {
        std::size_t cut = text.size();
        for (const std::string& stop : stops)
            cut = std::min(cut, text.find(stop));
        return text.substr(0, cut);
    }

    // Episodes: {"prompt_tokens", "tokens" (the sample's), "logprobs" (the sample's), "reward",
    // "group"}; the loss applies to the sample's tokens only.
    json grpo(const json& r) {
        std::vector<torchnn::TrainingSequence> batch;
        for (const json& e : r.value("episodes", json::array())) {
            torchnn::TrainingSequence s;
            try {
                const auto prompt = e.at("prompt_tokens").get<std::vector<std::int32_t>>();
                const auto tokens = e.at("tokens").get<std::vector<std::int32_t>>();
                const auto logprobs = e.at("logprobs").get<std::vector<float>>();
                if (tokens.empty() || logprobs.size() != tokens.size())
                    return {{"error", "an episode needs tokens and one log-probability each"}};
                s.tokens = prompt;
                s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
                for (std::int32_t t : s.tokens)
                    if (t < 0 || t >= model_->vocabulary())
                        return {{"error", "a token id is out of the vocabulary"}};
                s.trained.assign(prompt.size(), 0);
                s.trained.resize(s.tokens.size(), 1);
                s.sampledLogprobs.assign(prompt.size(), 0.0F);
                s.sampledLogprobs.insert(s.sampledLogprobs.end(), logprobs.begin(), logprobs.end());
                s.reward = e.at("reward").get<double>();
                s.group = e.at("group").get<std::int64_t>();
            } catch (const json::exception& error) {
                return {{"error", std::string("episode: ") + error.what()}};
            }
            batch.push_back(std::move(s));
        }
        if (batch.empty())
            return {{"error", "grpo needs episodes"}};
        torchnn::PolicyUpdateSettings settings;
        settings.clipLow = r.value("clip_low", settings.clipLow);
        settings.clipHigh = r.value("clip_high", settings.clipHigh);
        settings.klCoefficient = r.value("kl", settings.klCoefficient);
        settings.entropyCoefficient = r.value("entropy", settings.entropyCoefficient);
        settings.epochs = std::max(1, r.value("epochs", settings.epochs));
        return stepJson(trainer_->groupPolicyStep(batch, settings));
    }

    json save(const json& r) {
        const std::string folder = r.value("out", "");
        if (folder.empty())
            return {{"error", "save needs out"}};
        // writeHuggingFaceFolder refuses a folder that exists and is not empty.
        std::string error;
        if (!saveTrainedModel(*model_, settings_.model, *tokenizer_, folder, "kwb-model serve",
                              &error))
            return {{"error", error}};
        return {{"saved", folder}};
    }

    // The training state to resume from (the adapters, the optimiser, the step count).
    json checkpoint(const json& r) {
        const std::string path = r.value("out", "");
        if (path.empty())
            return {{"error", "checkpoint needs out"}};
        if (std::string error = trainer_->saveCheckpoint(path); !error.empty())
            return {{"error", error}};
        return {{"checkpoint", path}, {"steps", trainer_->steps()}};
    }

    json restore(const json& r) {
        const std::string path = r.value("from", "");
        if (path.empty())
            return {{"error", "restore needs from"}};
        if (std::string error = trainer_->loadCheckpoint(path); !error.empty())
            return {{"error", error}};
        return {{"restored", path}, {"steps", trainer_->steps()}};
    }

    ServeSettings settings_;
    std::unique_ptr<model::BpeTokenizer> tokenizer_;
    std::optional<model::ChatTemplate> chat_;
    std::unique_ptr<torchnn::LlamaModel> model_;
    std::unique_ptr<torchnn::PolicyTrainer> trainer_;
    std::vector<std::string> tokenBytes_;
    std::int32_t endOfTurn_ = -1;
};

void serve(const ServeSettings& settings) {
    LineChannel channel;
    PolicyServer server(settings);
    const json ready = server.start();
    channel.write(ready);
    if (ready.contains("error"))
        std::exit(1);
    while (const auto line = channel.read()) {
        if (line->find_first_not_of(" \t\r") == std::string::npos)
            continue;
        const json request = json::parse(*line, nullptr, false);
        if (request.is_discarded() || !request.is_object()) {
            channel.write({{"error", "a request is one JSON object per line"}});
            continue;
        }
        if (request.value("op", "") == "quit")
            break;
        json reply;
        try {
            reply = server.handle(request);
        } catch (const std::exception& error) {
            // A torch error (out of memory, a shape the model cannot take) answers this request;
            // the model and trainer are still whole for the next.
            reply = {{"error", error.what()}};
        }
        if (request.contains("id"))
            reply["id"] = request["id"];
        if (!channel.write(reply))
            break;
    }
}

} // namespace

void addServeCommand(CLI::App& app) {
    auto s = std::make_shared<ServeSettings>();
    auto* cmd = app.add_subcommand(
        "serve", "Serve a policy for a training run: JSON requests, one per line (sample a group "
                 "of replies to a chat, optionally under a choice grammar; a GRPO step on scored "
                 "samples; save; checkpoint and restore the training state), on descriptor 3 "
                 "when open, else standard input and output");
    cmd->add_option("model", s->model, "GGUF file or model folder")->required();
    cmd->add_option("--device", s->device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
    cmd->add_flag("--float32", s->float32, "float32 on a GPU too (default there: bfloat16)");
    addTrainingOptions(cmd, s->optimiser, s->lora, s->full, s->gradientCheckpointing);
    cmd->add_option("--seed", s->lora.seed, "The adapters' initialisation seed (1)");
    cmd->callback([s] { serve(*s); });
}

} // namespace kwb::modelworker
