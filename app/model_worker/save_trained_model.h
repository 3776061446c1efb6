#pragma once

#include <string>

namespace kwb::model {
class BpeTokenizer;
}
namespace kwb::torchnn {
class LlamaModel;
}

namespace kwb::modelworker {

// Writes a trained model (adapters merged) as a Hugging Face folder that transformers opens:
// float32 safetensors, config.json, tokenizer.json and the chat template of `sourceModel` (the
// GGUF file or folder it was loaded from). False with `error` set when it cannot.
bool saveTrainedModel(const torchnn::LlamaModel& model, const std::string& sourceModel,
                      const model::BpeTokenizer& tokenizer, const std::string& folder,
                      const std::string& producedBy, std::string* error);

} // namespace kwb::modelworker
