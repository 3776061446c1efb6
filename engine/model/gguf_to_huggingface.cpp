#include "engine/model/gguf_to_huggingface.h"

#include "engine/model/bpe_tokenizer.h"
#include "engine/model/gguf_file.h"
#include "engine/model/llama_weights.h"
#include "engine/model/safetensors_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace kwb::model {

namespace fs = std::filesystem;

namespace {

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
    const auto tokenizer = BpeTokenizer::fromGguf(f);
    if (!tokenizer) {
        *error = tokenizer.error;
        return false;
    }
    // The weights as the model code reads them: dequantized, named and ordered as Hugging Face's.
    LlamaWeights weights = readLlamaWeights(ggufPath);
    if (!weights.error.empty()) {
        *error = weights.error;
        return false;
    }
    std::vector<SafetensorsWrite> tensors;
    for (auto& [name, w] : weights.tensors) {
        SafetensorsWrite out{name, "F32", {}, {}};
        for (std::int64_t d : w.shape)
            out.shape.push_back(std::uint64_t(d));
        out.bytes.resize(w.values.size() * sizeof(float));
        std::memcpy(out.bytes.data(), w.values.data(), out.bytes.size());
        std::vector<float>().swap(w.values); // one copy of each weight at a time
        tensors.push_back(std::move(out));
    }
    const LlamaConfig& c = weights.config;
    nlohmann::json config{{"architectures", {"LlamaForCausalLM"}},
                          {"model_type", "llama"},
                          {"hidden_size", c.width},
                          {"intermediate_size", c.feedForward},
                          {"num_hidden_layers", c.layers},
                          {"num_attention_heads", c.heads},
                          {"num_key_value_heads", c.kvHeads},
                          {"head_dim", c.headDim},
                          {"max_position_embeddings", c.context},
                          {"rms_norm_eps", c.rmsEpsilon},
                          {"rope_theta", c.ropeBase},
                          {"vocab_size", c.vocabulary},
                          {"hidden_act", "silu"},
                          {"attention_bias", false},
                          {"mlp_bias", false},
                          {"tie_word_embeddings", c.tiedEmbeddings},
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
