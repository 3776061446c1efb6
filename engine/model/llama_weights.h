#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kwb::model {

// Rotary scaling that divides each frequency by a fixed number whatever the sequence's length:
// Llama 3's "llama3" (long wavelengths divided by `factor`, short ones kept, a smooth blend
// between) and "linear" (every one divided by `factor`). Hugging Face's parameters, kept so that
// a saved folder names them again.
struct RopeScaling {
    std::string type; // empty: none
    double factor = 1.0;
    double lowFrequencyFactor = 1.0;
    double highFrequencyFactor = 4.0;
    double originalContext = 0.0;
};

// What a Llama-family decoder (Llama, SmolLM, Mistral, Qwen2) is made of.
struct LlamaConfig {
    int layers = 0;
    int heads = 0;
    int kvHeads = 0;
    int width = 0;
    int feedForward = 0;
    int vocabulary = 0;
    int context = 0;
    int headDim = 0;
    double ropeBase = 10000.0;
    double rmsEpsilon = 1e-5;
    bool tiedEmbeddings = false;
    // Biases on the q, k and v projections (Qwen2's attention); no other projection has one.
    bool qkvBias = false;
    // The family a saved folder names as its model_type: "llama" or "qwen2".
    std::string family = "llama";
    RopeScaling ropeScaling;
    // What each rotary frequency (headDim / 2 of them) is divided by; empty: none. From
    // ropeScaling, or a GGUF file's rope_freqs tensor (llama.cpp writes Llama 3's scaling so).
    std::vector<double> ropeDivisors;
};

// The divisors `scaling` gives the frequencies base^(-2i / headDim); an empty list for none,
// and `error` set for parameters no divisor follows from (a factor that is not a positive
// number; llama3 without its original context or with low_freq_factor >= high_freq_factor).
std::vector<double> ropeDivisorsFor(const RopeScaling& scaling, double base, int headDim,
                                    std::string& error);

// One weight as floats, shape outermost first (PyTorch's order).
struct FloatTensor {
    std::vector<std::int64_t> shape;
    std::vector<float> values;
};

// A model's weights under Hugging Face's Llama names (model.embed_tokens.weight,
// model.layers.N.self_attn.q_proj.weight, ..., lm_head.weight), read from a GGUF file
// (dequantized, Q and K rows put back in Hugging Face's order) or a Hugging Face folder
// (config.json and safetensors in F32, F16 or BF16). The model code and the converter both
// start here, so a GGUF file and its conversion load identically.
struct LlamaWeights {
    LlamaConfig config;
    std::map<std::string, FloatTensor> tensors;
    std::string error; // set when reading failed; then the rest is empty
};

// Checked before any weight is read: a config whose counts disagree with the tensors (or that
// no int holds) would otherwise size caches and views from numbers the file does not back.
LlamaWeights readLlamaWeights(const std::string& path);
// The same reading and checks without the weights' values (`tensors` stays empty): what
// `kwb model info` reports as the reason a model cannot run.
LlamaWeights readLlamaSettings(const std::string& path);

// What is wrong with a model's settings against its tensors' shapes (Hugging Face names,
// outermost dimension first), or empty when every weight the decoder reads has the shape the
// settings give it. Fills in a vocabulary or feed-forward width the metadata left out.
std::string llamaShapeProblem(LlamaConfig& config,
                              const std::map<std::string, std::vector<std::int64_t>>& shapes);

// GGUF's tensor name as Hugging Face's Llama name; empty for tensors with no such weight.
std::string huggingFaceLlamaName(const std::string& ggufName);

} // namespace kwb::model
