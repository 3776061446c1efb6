#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kwb::torchnn {

// A Llama-family decoder in libtorch (RMSNorm, rotary positions as Hugging Face applies them,
// SwiGLU, grouped-query attention, tied or untied embeddings), built from
// model::readLlamaWeights: a GGUF file or a Hugging Face folder. This header names no torch
// type, so the worker's command-line code compiles without torch's headers.
class LlamaModel {
public:
    struct Loaded;
    // device: "cpu" or "cuda"; float32 on the CPU, bfloat16 on a GPU unless `float32` is set.
    static Loaded load(const std::string& path, const std::string& device, bool float32 = false);
    ~LlamaModel();

    // Logits of every position of one sequence: positions x vocabulary floats, row-major.
    std::vector<float> logits(const std::vector<std::int32_t>& ids) const;
    int vocabulary() const;
    std::string describe() const; // "30 layers, 9 heads (3 key/value), width 576, cpu float32"

private:
    LlamaModel();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

struct LlamaModel::Loaded {
    std::unique_ptr<LlamaModel> model;
    std::string error;
    explicit operator bool() const { return model != nullptr; }
};

} // namespace kwb::torchnn
