#pragma once

#include <string>

namespace kwb::model {

// Writes a Llama-architecture GGUF model (Llama, SmolLM, ...) as a Hugging Face folder that
// transformers opens: model.safetensors (float32, the quantized tensors dequantized, Q and K
// rows put back in Hugging Face's order: GGUF interleaves each head's rotary halves),
// config.json, tokenizer.json and tokenizer_config.json (with the chat template). False with
// `error` for another architecture or a tensor that cannot be read; nothing is left half
// written in `folder`.
bool convertGgufToHuggingFace(const std::string& ggufPath, const std::string& folder,
                              std::string* error);

} // namespace kwb::model
