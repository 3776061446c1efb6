// kwb-model: the local model's process. libtorch never shares a process with kwb or the GUI
// (docs/ARCHITECTURE.md, engine/torch), so generation and training run here and kwb talks to
// this executable. It answers `logits` and `generate`, which the tests compare with
// transformers, `train sft`, and `serve` (a training run's policy, spoken to in JSON lines).
#include "engine/torch/llama_model.h"
#include "serve_command.h"
#include "train_command.h"

#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
    CLI::App app("kwb-model: runs a local Llama-family model (GGUF file or Hugging Face folder) "
                 "with libtorch");
    app.require_subcommand(1);
    // Before any subcommand runs: torch's default is one thread per core, which on a shared
    // machine (a test run, the GUI beside it) has two processes' threads spinning on each core.
    app.add_option_function<int>(
        "--threads",
        [](int threads) {
            if (threads > 0)
                at::set_num_threads(threads);
        },
        "Threads for the CPU's work (0, the default: one per core)");

    std::string path, device = "cpu", out;
    std::vector<std::int32_t> ids;
    bool float32 = false;
    auto* logits = app.add_subcommand(
        "logits", "The logits of every position for a sequence of token ids, written as "
                  "float32 (positions x vocabulary, row-major) to --out; a JSON summary on "
                  "standard output");
    logits->add_option("path", path, "GGUF file or model folder")->required();
    logits->add_option("--ids", ids, "Token ids")->required()->delimiter(',');
    logits->add_option("--device", device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
    logits->add_flag("--float32", float32, "float32 on a GPU too (default there: bfloat16)");
    logits->add_option("--out", out, "File for the raw logits")->required();
    logits->callback([&] {
        const auto started = std::chrono::steady_clock::now();
        const auto loaded = kwb::torchnn::LlamaModel::load(path, device, float32);
        if (!loaded) {
            std::cerr << "kwb-model: " << loaded.error << "\n";
            std::exit(1);
        }
        const auto ready = std::chrono::steady_clock::now();
        const std::vector<float> values = loaded.model->logits(ids);
        const auto done = std::chrono::steady_clock::now();
        std::ofstream file(out, std::ios::binary | std::ios::trunc);
        file.write(reinterpret_cast<const char*>(values.data()),
                   std::streamsize(values.size() * sizeof(float)));
        if (!file.flush()) {
            std::cerr << "kwb-model: cannot write " << out << "\n";
            std::exit(1);
        }
        const auto seconds = [](auto a, auto b) {
            return std::chrono::duration<double>(b - a).count();
        };
        std::cout << nlohmann::json{{"positions", ids.size()},
                                    {"vocabulary", loaded.model->vocabulary()},
                                    {"model", loaded.model->describe()},
                                    {"load_seconds", seconds(started, ready)},
                                    {"forward_seconds", seconds(ready, done)}}
                         .dump()
                  << "\n";
    });
    kwb::torchnn::LlamaModel::GenerationOptions options;
    std::string generatePath, generateDevice = "cpu";
    std::vector<std::int32_t> prompt;
    bool generateFloat32 = false;
    auto* generate = app.add_subcommand(
        "generate", "Continue a sequence of token ids (greedy, or sampled with a temperature): "
                    "the new tokens and their log-probabilities as JSON");
    generate->add_option("path", generatePath, "GGUF file or model folder")->required();
    generate->add_option("--ids", prompt, "Prompt token ids")->required()->delimiter(',');
    generate->add_option("--max-tokens", options.maxTokens, "At most this many new tokens (64)");
    generate->add_option("--temperature", options.temperature, "0 (default): greedy");
    generate->add_option("--top-p", options.topP, "Nucleus sampling threshold (1: off)");
    generate->add_option("--top-k", options.topK, "Sample among the k likeliest (0: off)");
    generate->add_option("--stop-ids", options.stopIds, "Token ids that end the generation")
        ->delimiter(',');
    generate->add_option("--seed", options.seed, "Sampling seed");
    generate->add_option("--device", generateDevice, "cpu or cuda")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    generate->add_flag("--float32", generateFloat32, "float32 on a GPU too");
    generate->callback([&] {
        const auto loaded =
            kwb::torchnn::LlamaModel::load(generatePath, generateDevice, generateFloat32);
        if (!loaded) {
            std::cerr << "kwb-model: " << loaded.error << "\n";
            std::exit(1);
        }
        const auto g = loaded.model->generate(prompt, options);
        std::cout << nlohmann::json{{"tokens", g.tokens},
                                    {"logprobs", g.logprobs},
                                    {"stop_reason", g.stopReason},
                                    {"model", loaded.model->describe()},
                                    {"prefill_seconds", g.prefillSeconds},
                                    {"decode_seconds", g.decodeSeconds},
                                    {"decoding", g.decoding},
                                    {"tokens_per_second",
                                     g.decodeSeconds > 0 ? double(g.tokens.size()) / g.decodeSeconds
                                                         : 0.0}}
                         .dump()
                  << "\n";
    });
    kwb::modelworker::addTrainCommand(app);
    kwb::modelworker::addServeCommand(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error);
    } catch (const std::exception& error) {
        // A torch error (a shape or an id the checks did not foresee) is a message and exit
        // status 1, not an abort with a core dump; torch appends a C++ backtrace after the
        // first line, which says what went wrong.
        const std::string what = error.what();
        std::cerr << "kwb-model: " << what.substr(0, what.find('\n')) << "\n";
        return 1;
    }
    return 0;
}
