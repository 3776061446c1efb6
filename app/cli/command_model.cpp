#include "commands.h"
#include "engine/model/gguf_to_huggingface.h"
#include "engine/model/model_files.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace kwb::cli {
namespace {

void printInfo(const nlohmann::json& d) {
    const auto text = [](const nlohmann::json& v) {
        return v.is_null() ? std::string("?") : v.is_string() ? v.get<std::string>() : v.dump();
    };
    std::cout << "format        " << text(d["format"]) << "\n"
              << "architecture  " << text(d["architecture"]) << "\n"
              << "name          " << text(d.value("name", nlohmann::json())) << "\n"
              << "layers        " << text(d["layers"]) << "\n"
              << "heads         " << text(d["heads"]) << " (key/value " << text(d["kv_heads"])
              << ")\n"
              << "width         " << text(d["width"]) << " (feed-forward "
              << text(d["feed_forward"]) << ")\n"
              << "vocabulary    " << text(d.value("vocabulary", nlohmann::json())) << "\n"
              << "context       " << text(d["context"]) << "\n"
              << "rope base     " << text(d["rope_base"]) << "\n";
    if (d.contains("rope_scaling"))
        std::cout << "rope scaling  " << text(d["rope_scaling"]) << "\n";
    if (d.contains("parameters"))
        std::cout << "parameters    " << d["parameters"].get<std::uint64_t>() << " in "
                  << text(d["tensors"]) << " tensors " << d["tensor_types"].dump() << "\n";
    const nlohmann::json& t = d["tokenizer"];
    if (t.contains("error"))
        std::cout << "tokenizer     not readable: " << t["error"].get<std::string>() << "\n";
    else
        std::cout << "tokenizer     " << text(t["type"]) << ", " << text(t["vocabulary"])
                  << " tokens, " << text(t["merges"]) << " merges, " << t["special_tokens"].size()
                  << " special\n";
    if (d.contains("runnable"))
        std::cout << "kwb-model     "
                  << (d["runnable"].get<bool>()
                          ? std::string("can run it")
                          : "cannot run it: " + d.value("problem", std::string()))
                  << "\n";
}

} // namespace

void addModelCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "model", "Inspect a local model: a GGUF file or a Hugging Face folder (config.json, "
                 "*.safetensors, tokenizer.json)");
    cmd->require_subcommand(1);

    auto path = std::make_shared<std::string>();
    auto asJson = std::make_shared<bool>(false);
    auto* info = cmd->add_subcommand(
        "info", "Architecture, layers, heads, vocabulary, context and tokenizer of a model");
    info->add_option("path", *path, "GGUF file or Hugging Face model folder")->required();
    info->add_flag("--json", *asJson, "One JSON object");
    info->callback([path, asJson] {
        const nlohmann::json d = model::describeModel(*path);
        if (d.contains("error"))
            failCommand(d["error"].get<std::string>());
        if (*asJson)
            std::cout << d.dump(2) << "\n";
        else
            printInfo(d);
    });

    auto tokenizerPath = std::make_shared<std::string>();
    auto text = std::make_shared<std::string>();
    auto file = std::make_shared<std::string>();
    auto plain = std::make_shared<bool>(false);
    auto* tokenize = cmd->add_subcommand(
        "tokenize", "The token ids of a text, as a JSON array (special tokens such as "
                    "<|im_start|> are recognised unless --no-special)");
    tokenize->add_option("path", *tokenizerPath, "GGUF file, model folder or tokenizer.json")
        ->required();
    auto* textOption = tokenize->add_option("--text", *text, "The text");
    tokenize->add_option("--file", *file, "Read the text from this file (- for standard input)")
        ->excludes(textOption);
    tokenize->add_flag("--no-special", *plain, "Treat special-token spellings as plain text");
    tokenize->callback([tokenizerPath, text, file, plain] {
        const auto loaded = model::loadTokenizer(*tokenizerPath);
        if (!loaded)
            failCommand(loaded.error);
        std::string input = *text;
        if (!file->empty()) {
            std::ifstream in;
            if (*file != "-") {
                in.open(*file, std::ios::binary);
                if (!in)
                    failCommand("cannot read " + *file);
            }
            std::istream& source = *file == "-" ? std::cin : in;
            input.assign(std::istreambuf_iterator<char>(source), {});
        }
        std::cout << nlohmann::json(loaded.tokenizer->encode(input, !*plain)).dump() << "\n";
    });

    auto ggufPath = std::make_shared<std::string>();
    auto tensorName = std::make_shared<std::string>();
    auto count = std::make_shared<std::size_t>(8);
    auto* tensor = cmd->add_subcommand(
        "tensor", "One tensor of a GGUF file (dequantized), a safetensors file or a model "
                  "folder: its type, shape (GGUF: innermost first), sum, mean absolute value and "
                  "first values, as JSON");
    tensor->add_option("path", *ggufPath, "GGUF file, safetensors file or model folder")
        ->required();
    tensor->add_option("name", *tensorName, "Tensor name, e.g. token_embd.weight")->required();
    tensor->add_option("--values", *count, "How many leading values to print (8)");
    tensor->callback([ggufPath, tensorName, count] {
        const model::TensorValues t = model::readTensor(*ggufPath, *tensorName);
        if (t.values.empty())
            failCommand(t.error.empty() ? "tensor " + *tensorName + " is empty" : t.error);
        double sum = 0, absolute = 0;
        for (float v : t.values) {
            sum += v;
            absolute += std::fabs(v);
        }
        const std::size_t shown = std::min(*count, t.values.size());
        std::cout << nlohmann::json{{"name", *tensorName},
                                    {"type", t.type},
                                    {"shape", t.shape},
                                    {"sum", sum},
                                    {"mean_abs", absolute / double(t.values.size())},
                                    {"values", std::vector<float>(t.values.begin(),
                                                                  t.values.begin() + long(shown))}}
                         .dump()
                  << "\n";
    });

    auto source = std::make_shared<std::string>();
    auto target = std::make_shared<std::string>();
    auto* convert = cmd->add_subcommand(
        "convert", "Write a llama-architecture GGUF model as a Hugging Face folder "
                   "(model.safetensors in float32, config.json, tokenizer.json, "
                   "tokenizer_config.json) that transformers opens");
    convert->add_option("gguf", *source, "GGUF file")->required();
    convert->add_option("folder", *target, "The new folder (must not exist or be empty)")
        ->required();
    convert->callback([source, target] {
        std::string error;
        if (!model::convertGgufToHuggingFace(*source, *target, &error))
            failCommand(error);
        std::cerr << "wrote " << *target << "\n";
    });

    auto chatPath = std::make_shared<std::string>();
    auto messagesFile = std::make_shared<std::string>();
    auto generation = std::make_shared<bool>(false);
    auto asIds = std::make_shared<bool>(false);
    auto* chat = cmd->add_subcommand(
        "chat", "Render a conversation in the model's chat format (ChatML or Llama 3): "
                "the text, or with --ids its token ids as a JSON array");
    chat->add_option("path", *chatPath, "GGUF file or model folder")->required();
    chat->add_option("--messages", *messagesFile,
                     "JSON file (- for standard input): [{\"role\": ..., \"content\": ...}]")
        ->required();
    chat->add_flag("--generation-prompt", *generation, "End with the opening of an assistant turn");
    chat->add_flag("--ids", *asIds, "Print token ids instead of text");
    chat->callback([chatPath, messagesFile, generation, asIds] {
        std::string error;
        const auto chatTemplate = model::loadChatTemplate(*chatPath, &error);
        if (!chatTemplate)
            failCommand(error);
        std::ifstream in;
        if (*messagesFile != "-") {
            in.open(*messagesFile, std::ios::binary);
            if (!in)
                failCommand("cannot read " + *messagesFile);
        }
        const nlohmann::json messages =
            nlohmann::json::parse(*messagesFile == "-" ? std::cin : in, nullptr, false);
        if (!messages.is_array())
            failCommand("--messages must hold a JSON array of {role, content} objects");
        std::vector<model::ChatTurn> turns;
        for (const nlohmann::json& m : messages) {
            if (!m.is_object() || !m.contains("role") || !m["role"].is_string() ||
                !m.contains("content") || !m["content"].is_string())
                failCommand("every message needs a string role and content: " + m.dump());
            turns.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
        }
        const std::string text = chatTemplate->render(turns, *generation);
        if (!*asIds) {
            std::cout << text;
            return;
        }
        const auto loaded = model::loadTokenizer(*chatPath);
        if (!loaded)
            failCommand(loaded.error);
        std::cout << nlohmann::json(loaded.tokenizer->encode(text)).dump() << "\n";
    });

    auto ids = std::make_shared<std::vector<model::TokenId>>();
    auto detokenizerPath = std::make_shared<std::string>();
    auto* detokenize = cmd->add_subcommand("detokenize", "The text of token ids");
    detokenize->add_option("path", *detokenizerPath, "GGUF file, model folder or tokenizer.json")
        ->required();
    detokenize->add_option("ids", *ids, "Token ids")->required();
    detokenize->callback([detokenizerPath, ids] {
        const auto loaded = model::loadTokenizer(*detokenizerPath);
        if (!loaded)
            failCommand(loaded.error);
        std::cout << loaded.tokenizer->decode(*ids);
    });
}

} // namespace kwb::cli
