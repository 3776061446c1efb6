#include "engine/model/llama_weights.h"

#include "engine/model/gguf_file.h"
#include "engine/model/safetensors_file.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
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
    {"attn_q.bias", "self_attn.q_proj.bias"},
    {"attn_k.bias", "self_attn.k_proj.bias"},
    {"attn_v.bias", "self_attn.v_proj.bias"},
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

// A count from the metadata as an int; a value no int holds (1e12, 2.5, -3) becomes -1, which
// the shape check refuses by name.
int countOrInvalid(double value) {
    return value >= 0 && value <= std::numeric_limits<int>::max() && value == std::floor(value)
               ? int(value)
               : -1;
}

// llama.cpp writes Llama 3's rotary scaling as a tensor of per-frequency divisors (rope_freqs)
// and linear scaling as metadata. Other kinds (YaRN) change more than the frequencies: refused.
std::string ggufRotaryScaling(const GgufFile& f, const std::string& arch, LlamaConfig& c) {
    const std::string type = f.string(arch + ".rope.scaling.type", "none");
    if (type == "linear") {
        c.ropeScaling.type = "linear";
        c.ropeScaling.factor = f.number(arch + ".rope.scaling.factor").value_or(0.0);
        std::string error;
        c.ropeDivisors = ropeDivisorsFor(c.ropeScaling, c.ropeBase, c.headDim, error);
        return error;
    }
    if (type != "none")
        return "rotary scaling '" + type + "' is not supported (linear and Llama 3's are)";
    const GgufTensorInfo* freqs = f.tensor("rope_freqs.weight");
    if (!freqs)
        return {};
    std::string error;
    const std::vector<float> divisors = f.dequantize(*freqs, &error);
    if (!error.empty())
        return error;
    if (divisors.size() != std::size_t(c.headDim / 2))
        return "rope_freqs.weight holds " + std::to_string(divisors.size()) +
               " divisors for a head size of " + std::to_string(c.headDim);
    for (float d : divisors)
        if (!(d > 0.0f) || !std::isfinite(d))
            return "rope_freqs.weight holds a divisor that is not a positive number";
    c.ropeDivisors.assign(divisors.begin(), divisors.end());
    return {};
}

// Hugging Face's rotary scaling: transformers 5 writes it into rope_parameters beside
// rope_theta, earlier versions as rope_scaling.
std::string folderRotaryScaling(const nlohmann::json& config, const std::string& folder,
                                LlamaConfig& c) {
    const nlohmann::json none = nlohmann::json::object();
    const nlohmann::json& legacy = config.contains("rope_scaling") ? config["rope_scaling"] : none;
    const nlohmann::json& current =
        config.contains("rope_parameters") ? config["rope_parameters"] : none;
    if (!legacy.is_null() && !legacy.is_object())
        return folder + "/config.json: rope_scaling is neither an object nor null";
    const nlohmann::json& scaling = legacy.is_object() && !legacy.empty() ? legacy : current;
    if (!scaling.is_object())
        return {};
    const auto text = [&](const char* key) {
        return scaling.contains(key) && scaling[key].is_string() ? scaling[key].get<std::string>()
                                                                 : std::string();
    };
    const auto number = [&](const char* key, double fallback) {
        return scaling.contains(key) && scaling[key].is_number() ? scaling[key].get<double>()
                                                                 : fallback;
    };
    std::string type = text("rope_type");
    if (type.empty())
        type = text("type");
    if (type.empty() || type == "default")
        return {};
    if (type != "linear" && type != "llama3")
        return folder + "/config.json: rope_type '" + type +
               "' is not supported (default, linear and llama3 are)";
    c.ropeScaling = {type, number("factor", 0.0), number("low_freq_factor", 1.0),
                     number("high_freq_factor", 4.0),
                     number("original_max_position_embeddings", 0.0)};
    std::string error;
    c.ropeDivisors = ropeDivisorsFor(c.ropeScaling, c.ropeBase, c.headDim, error);
    return error.empty() ? error : folder + "/config.json: " + error;
}

LlamaWeights fromGguf(const std::string& path, bool withValues) {
    LlamaWeights out;
    const auto opened = GgufFile::open(path);
    if (!opened) {
        out.error = opened.error;
        return out;
    }
    const GgufFile& f = *opened.file;
    const std::string arch = f.string("general.architecture");
    if (arch != "llama" && arch != "qwen2") {
        out.error = "architecture '" + arch + "': llama and qwen2 GGUF files are read";
        return out;
    }
    const auto integer = [&](const std::string& k, std::int64_t fallback) {
        return countOrInvalid(double(f.integer(arch + "." + k).value_or(fallback)));
    };
    LlamaConfig& c = out.config;
    c.layers = integer("block_count", 0);
    c.heads = integer("attention.head_count", 0);
    c.kvHeads = integer("attention.head_count_kv", c.heads);
    c.width = integer("embedding_length", 0);
    c.feedForward = integer("feed_forward_length", 0);
    c.context = integer("context_length", 2048);
    c.ropeBase = f.number(arch + ".rope.freq_base").value_or(10000.0);
    c.rmsEpsilon = f.number(arch + ".attention.layer_norm_rms_epsilon").value_or(1e-5);
    const GgufValue* tokens = f.find("tokenizer.ggml.tokens");
    c.vocabulary = integer(
        "vocab_size", tokens && tokens->strings() ? std::int64_t(tokens->strings()->size()) : 0);
    c.tiedEmbeddings = f.tensor("output.weight") == nullptr;
    c.headDim = c.heads > 0 ? c.width / c.heads : 0;
    c.family = arch;
    c.qkvBias = arch == "qwen2";
    if (!c.qkvBias && f.tensor("blk.0.attn_q.bias")) {
        out.error =
            "a llama-architecture GGUF file with attention biases: not a layout this decoder knows";
        return out;
    }
    // The metadata against the tensor table before anything is dequantized or allocated.
    std::map<std::string, std::vector<std::int64_t>> shapes;
    for (const GgufTensorInfo& t : f.tensors())
        if (const std::string name = huggingFaceLlamaName(t.name); !name.empty())
            shapes[name] = std::vector<std::int64_t>(t.dims.rbegin(), t.dims.rend());
    std::string problem = llamaShapeProblem(c, shapes);
    if (problem.empty())
        problem = ggufRotaryScaling(f, arch, c);
    if (!problem.empty() || !withValues) {
        out.error = problem;
        return out;
    }
    // Only llama.cpp's llama converter interleaves the rotary halves; its qwen2 converter keeps
    // Hugging Face's order (rotate-half rotary embeddings, like ours).
    const bool interleaved = arch == "llama";
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
        if (interleaved && t.name.ends_with("attn_q.weight"))
            w.values = unpermuteRows(w.values, std::size_t(c.heads), columns);
        else if (interleaved && t.name.ends_with("attn_k.weight"))
            w.values = unpermuteRows(w.values, std::size_t(c.kvHeads), columns);
        out.tensors.emplace(name, std::move(w));
    }
    return out;
}

LlamaWeights fromFolder(const std::string& folder, bool withValues) {
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
    const auto number = [&](const nlohmann::json& in, const char* k, double fallback) {
        return in.contains(k) && in[k].is_number() ? in[k].get<double>() : fallback;
    };
    const auto count = [&](const char* k, double fallback) {
        return countOrInvalid(number(config, k, fallback));
    };
    LlamaConfig& c = out.config;
    c.layers = count("num_hidden_layers", 0);
    c.heads = count("num_attention_heads", 0);
    c.kvHeads = count("num_key_value_heads", c.heads);
    c.width = count("hidden_size", 0);
    c.feedForward = count("intermediate_size", 0);
    c.vocabulary = count("vocab_size", 0);
    c.context = count("max_position_embeddings", 2048);
    // transformers 5 writes the rotary settings under rope_parameters, earlier versions at the
    // top level.
    const nlohmann::json rope = config.value("rope_parameters", nlohmann::json::object());
    c.ropeBase = number(config, "rope_theta",
                        rope.is_object() ? number(rope, "rope_theta", 10000.0) : 10000.0);
    c.rmsEpsilon = number(config, "rms_norm_eps", 1e-5);
    c.tiedEmbeddings = config.value("tie_word_embeddings", false);
    c.headDim = c.heads > 0 ? count("head_dim", double(std::max(c.width, 0) / c.heads)) : 0;
    c.family = type == "qwen2" ? "qwen2" : "llama";
    c.qkvBias = type == "qwen2";
    // Layouts this decoder does not compute are refused by name rather than run wrong: Llama's
    // attention_bias also puts a bias on o_proj, mlp_bias on the feed-forward, and Qwen2's
    // sliding window limits which keys a query sees.
    for (const char* key : {"attention_bias", "mlp_bias", "use_sliding_window"})
        if (config.contains(key) && config[key].is_boolean() && config[key].get<bool>()) {
            out.error = folder + "/config.json: " + key + " true is not supported";
            return out;
        }
    const auto weights = SafetensorsModel::open(folder);
    if (!weights) {
        out.error = weights.error;
        return out;
    }
    // The config against the tensors' headers before any data is converted or allocated.
    std::map<std::string, std::vector<std::int64_t>> shapes;
    for (const auto& file : weights.model->files())
        for (const SafetensorsTensor& t : file->tensors())
            shapes[t.name] = std::vector<std::int64_t>(t.shape.begin(), t.shape.end());
    if (std::string problem = llamaShapeProblem(c, shapes); !problem.empty()) {
        out.error = folder + ": " + problem;
        return out;
    }
    if (out.error = folderRotaryScaling(config, folder, c); !out.error.empty() || !withValues)
        return out;
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

std::string llamaShapeProblem(LlamaConfig& c,
                              const std::map<std::string, std::vector<std::int64_t>>& shapes) {
    const auto counted = [](const char* what, int value) {
        return value > 0 ? std::string()
                         : std::string("the model's ") + what + " is " +
                               (value < 0 ? "not a count this decoder can hold" : "missing or 0");
    };
    for (const auto& [what, value] : {std::pair{"layer count", c.layers},
                                      {"head count", c.heads},
                                      {"key/value head count", c.kvHeads},
                                      {"width", c.width},
                                      {"head size", c.headDim}})
        if (std::string problem = counted(what, value); !problem.empty())
            return problem;
    if (c.heads % c.kvHeads)
        return "the head count " + std::to_string(c.heads) +
               " is not a multiple of the key/value " + "head count " + std::to_string(c.kvHeads);
    if (c.headDim % 2)
        return "the head size " + std::to_string(c.headDim) +
               " is odd; rotary embeddings need pairs";
    if (c.context <= 0)
        return "the model's context length is missing or not a count";
    const auto shapeText = [](const std::vector<std::int64_t>& shape) {
        std::string text = "[";
        for (std::size_t i = 0; i < shape.size(); ++i)
            text += (i ? ", " : "") + std::to_string(shape[i]);
        return text + "]";
    };
    // The embedding names the vocabulary, the gate projection the feed-forward width, where
    // the metadata leaves them out.
    const auto embed = shapes.find("model.embed_tokens.weight");
    if (embed == shapes.end())
        return "no weight model.embed_tokens.weight";
    if (c.vocabulary <= 0 && embed->second.size() == 2)
        c.vocabulary = int(std::min<std::int64_t>(embed->second[0], 0x7fffffff));
    const auto gate = shapes.find("model.layers.0.mlp.gate_proj.weight");
    if (c.feedForward <= 0 && gate != shapes.end() && gate->second.size() == 2)
        c.feedForward = int(std::min<std::int64_t>(gate->second[0], 0x7fffffff));
    if (c.vocabulary <= 0 || c.feedForward <= 0)
        return "the model's vocabulary or feed-forward width is missing";
    const std::int64_t W = c.width, F = c.feedForward, V = c.vocabulary;
    const std::int64_t q = std::int64_t(c.heads) * c.headDim;
    const std::int64_t kv = std::int64_t(c.kvHeads) * c.headDim;
    const auto expect = [&](const std::string& name,
                            std::vector<std::int64_t> shape) -> std::string {
        const auto found = shapes.find(name);
        if (found == shapes.end())
            return "no weight " + name;
        if (found->second != shape)
            return name + " has the shape " + shapeText(found->second) + " where the model's " +
                   "settings (layers " + std::to_string(c.layers) + ", width " +
                   std::to_string(c.width) + ", heads " + std::to_string(c.heads) + "/" +
                   std::to_string(c.kvHeads) + ", head size " + std::to_string(c.headDim) +
                   ", feed-forward " + std::to_string(c.feedForward) + ", vocabulary " +
                   std::to_string(c.vocabulary) + ") give " + shapeText(shape);
        return {};
    };
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> expected{
        {"model.embed_tokens.weight", {V, W}}, {"model.norm.weight", {W}}};
    if (!c.tiedEmbeddings && shapes.count("lm_head.weight"))
        expected.push_back({"lm_head.weight", {V, W}});
    for (const auto& [name, shape] : expected)
        if (std::string problem = expect(name, shape); !problem.empty())
            return problem;
    // Layer by layer, so a layer count far beyond the file stops at the first missing one.
    for (int i = 0; i < c.layers; ++i) {
        const std::string layer = "model.layers." + std::to_string(i) + ".";
        for (const auto& [name, shape] :
             std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
                 {"input_layernorm.weight", {W}},
                 {"post_attention_layernorm.weight", {W}},
                 {"self_attn.q_proj.weight", {q, W}},
                 {"self_attn.k_proj.weight", {kv, W}},
                 {"self_attn.v_proj.weight", {kv, W}},
                 {"self_attn.o_proj.weight", {W, q}},
                 {"mlp.gate_proj.weight", {F, W}},
                 {"mlp.up_proj.weight", {F, W}},
                 {"mlp.down_proj.weight", {W, F}}})
            if (std::string problem = expect(layer + name, shape); !problem.empty())
                return problem;
        if (c.qkvBias)
            for (const auto& [name, shape] :
                 std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
                     {"self_attn.q_proj.bias", {q}},
                     {"self_attn.k_proj.bias", {kv}},
                     {"self_attn.v_proj.bias", {kv}}})
                if (std::string problem = expect(layer + name, shape); !problem.empty())
                    return problem;
    }
    return {};
}

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

std::vector<double> ropeDivisorsFor(const RopeScaling& s, double base, int headDim,
                                    std::string& error) {
    if (s.type.empty() || headDim < 2)
        return {};
    if (!(s.factor > 0.0) || !std::isfinite(s.factor)) {
        error = "the rotary scaling factor is missing or not a positive number";
        return {};
    }
    std::vector<double> divisors(std::size_t(headDim / 2), s.factor);
    if (s.type == "linear")
        return divisors;
    if (!(s.originalContext > 0.0) || !(s.lowFrequencyFactor > 0.0) ||
        !(s.highFrequencyFactor > s.lowFrequencyFactor)) {
        error = "llama3 rotary scaling needs original_max_position_embeddings and "
                "0 < low_freq_factor < high_freq_factor";
        return {};
    }
    // Wavelengths (in positions) shorter than the original context over high_freq_factor keep
    // their frequency, those longer than it over low_freq_factor are divided by the factor, and
    // the ones between blend the two in proportion to how many waves fit the original context.
    const double shortest = s.originalContext / s.highFrequencyFactor;
    const double longest = s.originalContext / s.lowFrequencyFactor;
    const double pi = std::acos(-1.0);
    for (std::size_t i = 0; i < divisors.size(); ++i) {
        const double wavelength = 2.0 * pi * std::pow(base, 2.0 * double(i) / headDim);
        if (wavelength < shortest) {
            divisors[i] = 1.0;
        } else if (wavelength <= longest) {
            const double blend = (s.originalContext / wavelength - s.lowFrequencyFactor) /
                                 (s.highFrequencyFactor - s.lowFrequencyFactor);
            divisors[i] = 1.0 / ((1.0 - blend) / s.factor + blend);
        }
    }
    return divisors;
}

LlamaWeights readLlamaWeights(const std::string& path) {
    std::error_code ec;
    return fs::is_directory(path, ec) ? fromFolder(path, true) : fromGguf(path, true);
}

LlamaWeights readLlamaSettings(const std::string& path) {
    std::error_code ec;
    return fs::is_directory(path, ec) ? fromFolder(path, false) : fromGguf(path, false);
}

} // namespace kwb::model
