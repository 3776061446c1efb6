// kwb-model: the local model's process. libtorch never shares a process with kwb or the GUI
// (docs/ARCHITECTURE.md, engine/torch), so generation and training run here and kwb talks to
// this executable. Today it answers `logits`, which the tests compare with transformers.
#include "engine/torch/llama_model.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
    CLI::App app("kwb-model: runs a local Llama-family model (GGUF file or Hugging Face folder) "
                 "with libtorch");
    app.require_subcommand(1);

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
    CLI11_PARSE(app, argc, argv);
    return 0;
}
