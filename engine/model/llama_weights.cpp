#include "engine/model/llama_weights.h"

#include "engine/model/gguf_file.h"
#include "engine/model/safetensors_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

namespace kwb::model {

namespace fs = std::filesystem;

namespace {

// GGUF's per-layer names and Hugging Face's Llama names (llama.cpp's tensor map, as facts).
const std::map<std::string, std::string> kLayerNames{
    {"attn_norm.weight", "input_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
};

// GGUF stores each head's Q (and K) rows with the rotary halves interleaved: its row
// h*D + 2b + a holds Hugging Face's row h*D + a*(D/2) + b. Put the rows back.
std::vector<float> unpermuteRows(const std::vector<float>& in, std::size_t heads,
                                 std::size_t columns) {
    const std::size_t rows = in.size() / columns;
    const std::size_t headDim = rows / heads;
    const std::size_t half = headDim / 2;
    std::vector<float> out(in.size());
    for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t a = 0; a < 2; ++a)
            for (std::size_t b = 0; b < half; ++b)
                std::memcpy(&out[(h * headDim + a * half + b) * columns],
                            &in[(h * headDim + 2 * b + a) * columns], columns * sizeof(float));
    return out;
}

LlamaWeights fromGguf(const std::string& path) {
    LlamaWeights out;
    const auto opened = GgufFile::open(path);
    if (!opened) {
        out.error = opened.error;
        return out;
    }
    const GgufFile& f = *opened.file;
    const std::string arch = f.string("general.architecture");
    if (arch != "llama") {
        out.error = "architecture '" + arch + "': only llama-architecture GGUF files are read";
        return out;
    }
    const auto integer = [&](const std::string& k) { return f.integer(arch + "." + k); };
    LlamaConfig& c = out.config;
    c.layers = int(integer("block_count").value_or(0));
    c.heads = int(integer("attention.head_count").value_or(0));
    c.kvHeads = int(integer("attention.head_count_kv").value_or(c.heads));
    c.width = int(integer("embedding_length").value_or(0));
    c.feedForward = int(integer("feed_forward_length").value_or(0));
    c.context = int(integer("context_length").value_or(2048));
    c.ropeBase = f.number(arch + ".rope.freq_base").value_or(10000.0);
    c.rmsEpsilon = f.number(arch + ".attention.layer_norm_rms_epsilon").value_or(1e-5);
    const GgufValue* tokens = f.find("tokenizer.ggml.tokens");
    c.vocabulary = int(
        integer("vocab_size")
            .value_or(tokens && tokens->strings() ? std::int64_t(tokens->strings()->size()) : 0));
    c.tiedEmbeddings = f.tensor("output.weight") == nullptr;
    if (c.layers <= 0 || c.heads <= 0 || c.kvHeads <= 0 || c.width <= 0 || c.width % c.heads) {
        out.error = "the file lacks a usable llama block count, head count or width";
        return out;
    }
    c.headDim = c.width / c.heads;
    for (const GgufTensorInfo& t : f.tensors()) {
        const std::string name = huggingFaceLlamaName(t.name);
        if (name.empty())
            continue; // rope_freqs and other derived tensors have no Hugging Face weight
        FloatTensor w;
        w.values = f.dequantize(t, &out.error);
        if (w.values.empty()) {
            out.tensors.clear();
            return out;
        }
        // GGUF's dims run innermost first; PyTorch's shape outermost first.
        for (auto d = t.dims.rbegin(); d != t.dims.rend(); ++d)
            w.shape.push_back(std::int64_t(*d));
        const std::size_t columns = t.dims.size() > 1 ? std::size_t(t.dims[0]) : 1;
        if (t.name.ends_with("attn_q.weight"))
            w.values = unpermuteRows(w.values, std::size_t(c.heads), columns);
        else if (t.name.ends_with("attn_k.weight"))
            w.values = unpermuteRows(w.values, std::size_t(c.kvHeads), columns);
        out.tensors.emplace(name, std::move(w));
    }
    return out;
}

LlamaWeights fromFolder(const std::string& folder) {
    LlamaWeights out;
    std::ifstream in(fs::path(folder) / "config.json");
    const nlohmann::json config = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
    if (!config.is_object()) {
        out.error = folder + "/config.json is missing or not JSON";
        return out;
    }
    const std::string type = config.value("model_type", "");
    if (type != "llama" && type != "qwen2" && type != "mistral") {
        out.error = "model_type '" + type + "': llama, qwen2 and mistral folders are read";
        return out;
    }
    const auto number = [&](const char* k, double fallback) {
        return config.contains(k) && config[k].is_number() ? config[k].get<double>() : fallback;
    };
    LlamaConfig& c = out.config;
    c.layers = int(number("num_hidden_layers", 0));
    c.heads = int(number("num_attention_heads", 0));
    c.kvHeads = int(number("num_key_value_heads", c.heads));
    c.width = int(number("hidden_size", 0));
    c.feedForward = int(number("intermediate_size", 0));
    c.vocabulary = int(number("vocab_size", 0));
    c.context = int(number("max_position_embeddings", 2048));
    c.ropeBase = number("rope_theta", 10000.0);
    c.rmsEpsilon = number("rms_norm_eps", 1e-5);
    c.tiedEmbeddings = config.value("tie_word_embeddings", false);
    if (c.layers <= 0 || c.heads <= 0 || c.width <= 0 || c.width % c.heads) {
        out.error = folder + "/config.json lacks a usable layer count, head count or width";
        return out;
    }
    c.headDim = int(number("head_dim", double(c.width / c.heads)));
    if (type == "qwen2") {
        // Qwen2 has biases on q, k and v, which this decoder does not model yet.
        out.error = "qwen2's attention biases are not supported yet";
        return out;
    }
    const auto weights = SafetensorsModel::open(folder);
    if (!weights) {
        out.error = weights.error;
        return out;
    }
    for (const auto& file : weights.model->files())
        for (const SafetensorsTensor& t : file->tensors()) {
            FloatTensor w;
            w.values = file->toFloat(t, &out.error);
            if (w.values.empty() && t.elements() > 0) {
                out.tensors.clear();
                return out;
            }
            for (std::uint64_t d : t.shape)
                w.shape.push_back(std::int64_t(d));
            out.tensors.emplace(t.name, std::move(w));
        }
    return out;
}

} // namespace

std::string huggingFaceLlamaName(const std::string& gguf) {
    if (gguf == "token_embd.weight")
        return "model.embed_tokens.weight";
    if (gguf == "output_norm.weight")
        return "model.norm.weight";
    if (gguf == "output.weight")
        return "lm_head.weight";
    static const std::regex layer(R"(blk\.(\d+)\.(.+))");
    std::smatch m;
    if (std::regex_match(gguf, m, layer)) {
        const auto found = kLayerNames.find(m[2]);
        if (found != kLayerNames.end())
            return "model.layers." + m[1].str() + "." + found->second;
    }
    return {};
}

LlamaWeights readLlamaWeights(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec))
        return fromFolder(path);
    return fromGguf(path);
}

} // namespace kwb::model
