#include "engine/model/gguf_to_huggingface.h"

#include "engine/model/bpe_tokenizer.h"
#include "engine/model/gguf_file.h"
#include "engine/model/safetensors_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
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

std::string huggingFaceName(const std::string& gguf) {
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

bool writeJson(const fs::path& path, const nlohmann::json& doc, std::string* error) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << doc.dump(2) << "\n";
    if (!out.flush()) {
        *error = "cannot write " + path.string();
        return false;
    }
    return true;
}

} // namespace

bool convertGgufToHuggingFace(const std::string& ggufPath, const std::string& folder,
                              std::string* error) {
    const auto opened = GgufFile::open(ggufPath);
    if (!opened) {
        *error = opened.error;
        return false;
    }
    const GgufFile& f = *opened.file;
    const std::string arch = f.string("general.architecture");
    if (arch != "llama") {
        *error = "architecture '" + arch + "': only llama-architecture GGUF files are converted";
        return false;
    }
    const auto key = [&](const std::string& k) { return f.integer(arch + "." + k); };
    const auto heads = key("attention.head_count");
    const auto kvHeads = key("attention.head_count_kv").value_or(heads.value_or(0));
    const auto width = key("embedding_length");
    const auto layers = key("block_count");
    if (!heads || !width || !layers || *heads <= 0 || kvHeads <= 0) {
        *error = "the file lacks the llama head count, width or block count";
        return false;
    }
    const auto tokenizer = BpeTokenizer::fromGguf(f);
    if (!tokenizer) {
        *error = tokenizer.error;
        return false;
    }

    std::vector<SafetensorsWrite> tensors;
    for (const GgufTensorInfo& t : f.tensors()) {
        const std::string name = huggingFaceName(t.name);
        if (name.empty())
            continue; // rope_freqs and other derived tensors have no Hugging Face weight
        std::string readError;
        std::vector<float> values = f.dequantize(t, &readError);
        if (values.empty()) {
            *error = readError;
            return false;
        }
        // GGUF's dims run innermost first; PyTorch's shape outermost first.
        std::vector<std::uint64_t> shape(t.dims.rbegin(), t.dims.rend());
        const std::size_t columns = t.dims.size() > 1 ? std::size_t(t.dims[0]) : 1;
        if (t.name.ends_with("attn_q.weight"))
            values = unpermuteRows(values, std::size_t(*heads), columns);
        else if (t.name.ends_with("attn_k.weight"))
            values = unpermuteRows(values, std::size_t(kvHeads), columns);
        SafetensorsWrite w{name, "F32", shape, {}};
        w.bytes.resize(values.size() * sizeof(float));
        std::memcpy(w.bytes.data(), values.data(), w.bytes.size());
        tensors.push_back(std::move(w));
    }
    const bool tied = f.tensor("output.weight") == nullptr;
    const std::int64_t vocabulary =
        key("vocab_size").value_or(std::int64_t(tokenizer.tokenizer->vocabularySize()));
    nlohmann::json config{
        {"architectures", {"LlamaForCausalLM"}},
        {"model_type", "llama"},
        {"hidden_size", *width},
        {"intermediate_size", key("feed_forward_length").value_or(4 * *width)},
        {"num_hidden_layers", *layers},
        {"num_attention_heads", *heads},
        {"num_key_value_heads", kvHeads},
        {"head_dim", *width / *heads},
        {"max_position_embeddings", key("context_length").value_or(2048)},
        {"rms_norm_eps", f.number(arch + ".attention.layer_norm_rms_epsilon").value_or(1e-5)},
        {"rope_theta", f.number(arch + ".rope.freq_base").value_or(10000.0)},
        {"vocab_size", vocabulary},
        {"hidden_act", "silu"},
        {"attention_bias", false},
        {"mlp_bias", false},
        {"tie_word_embeddings", tied},
        {"torch_dtype", "float32"}};
    const BpeTokenizer& tok = *tokenizer.tokenizer;
    if (tok.bos())
        config["bos_token_id"] = *tok.bos();
    if (tok.eos())
        config["eos_token_id"] = *tok.eos();
    nlohmann::json tokenizerConfig{{"tokenizer_class", "PreTrainedTokenizerFast"},
                                   {"model_max_length", config["max_position_embeddings"]},
                                   {"clean_up_tokenization_spaces", false}};
    if (tok.bos())
        tokenizerConfig["bos_token"] = tok.tokenText(*tok.bos());
    if (tok.eos())
        tokenizerConfig["eos_token"] = tok.tokenText(*tok.eos());
    if (const std::string chat = f.string("tokenizer.chat_template"); !chat.empty())
        tokenizerConfig["chat_template"] = chat;

    // Everything goes into a fresh folder beside the target, renamed into place at the end.
    const fs::path target(folder);
    const fs::path staging = target.string() + ".part";
    std::error_code ec;
    fs::remove_all(staging, ec);
    if (!fs::create_directories(staging, ec) && ec) {
        *error = "cannot create " + staging.string() + ": " + ec.message();
        return false;
    }
    const bool written =
        writeSafetensors((staging / "model.safetensors").string(), tensors,
                         {{"format", "pt"}, {"source", "kwb model convert"}}, error) &&
        writeJson(staging / "config.json", config, error) &&
        writeJson(staging / "tokenizer.json", tok.toTokenizerJson(), error) &&
        writeJson(staging / "tokenizer_config.json", tokenizerConfig, error);
    if (!written) {
        fs::remove_all(staging, ec);
        return false;
    }
    if (fs::exists(target, ec) && !fs::is_empty(target, ec)) {
        fs::remove_all(staging, ec);
        *error = folder + " exists and is not empty";
        return false;
    }
    fs::remove(target, ec);
    fs::rename(staging, target, ec);
    if (ec) {
        *error = "cannot rename " + staging.string() + ": " + ec.message();
        fs::remove_all(staging, ec);
        return false;
    }
    return true;
}

} // namespace kwb::model
