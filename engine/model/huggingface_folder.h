#pragma once

#include "engine/model/bpe_tokenizer.h"
#include "engine/model/llama_weights.h"
#include "engine/model/safetensors_file.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kwb::model {

// config.json of a Llama-family model (Llama, or Qwen2 by config.family) as transformers reads it.
nlohmann::json huggingFaceLlamaConfig(const LlamaConfig& config);

// Writes a Hugging Face model folder that transformers opens: model.safetensors (the tensors as
// given, under Hugging Face's names), config.json, tokenizer.json and tokenizer_config.json
// (with the chat template, when there is one). Everything is written into a fresh folder beside
// the target and renamed into place, so nothing is left half written; a target that exists and
// is not empty is refused. `source` goes into the safetensors metadata.
bool writeHuggingFaceFolder(const std::string& folder, const LlamaConfig& config,
                            std::vector<SafetensorsWrite> tensors, const BpeTokenizer& tokenizer,
                            const std::string& chatTemplate, const std::string& source,
                            std::string* error);

} // namespace kwb::model
