#include "engine/model/huggingface_folder.h"

#include <filesystem>
#include <fstream>

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

// The files a folder is made of (and the weights' partial file, which a crash while writing
// them leaves behind); the staging folder holds nothing else.
constexpr const char* kFolderFiles[] = {"model.safetensors", "model.safetensors.part",
                                        "config.json", "tokenizer.json", "tokenizer_config.json"};

// Removes the staging folder file by file. Not std::filesystem::remove_all: this code also runs
// in kwb-model, where libtorch's own exported copy of remove_all takes its place and crashes on
// a folder that is not empty (docs/ARCHITECTURE.md, engine/torch).
void removeStaging(const fs::path& staging) {
    std::error_code ec;
    for (const char* name : kFolderFiles)
        fs::remove(staging / name, ec);
    fs::remove(staging, ec);
}

bool targetTaken(const fs::path& target, const std::string& folder, std::string* error) {
    std::error_code ec;
    if (!fs::exists(target, ec) || fs::is_empty(target, ec))
        return false;
    *error = folder + " exists and is not empty";
    return true;
}

} // namespace

nlohmann::json huggingFaceLlamaConfig(const LlamaConfig& c) {
    const bool qwen2 = c.family == "qwen2";
    nlohmann::json config{{"architectures", {qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM"}},
                          {"model_type", qwen2 ? "qwen2" : "llama"},
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
                          {"tie_word_embeddings", c.tiedEmbeddings},
                          {"torch_dtype", "float32"}};
    if (c.ropeScaling.type == "linear") {
        config["rope_scaling"] = {{"rope_type", "linear"}, {"factor", c.ropeScaling.factor}};
    } else if (c.ropeScaling.type == "llama3") {
        config["rope_scaling"] = {
            {"rope_type", "llama3"},
            {"factor", c.ropeScaling.factor},
            {"low_freq_factor", c.ropeScaling.lowFrequencyFactor},
            {"high_freq_factor", c.ropeScaling.highFrequencyFactor},
            {"original_max_position_embeddings", c.ropeScaling.originalContext}};
    }
    if (qwen2) {
        // Qwen2's q, k and v biases come with its model_type; no window limits attention here.
        config["use_sliding_window"] = false;
    } else {
        config["attention_bias"] = false;
        config["mlp_bias"] = false;
    }
    return config;
}

bool writeHuggingFaceFolder(const std::string& folder, const LlamaConfig& llama,
                            std::vector<SafetensorsWrite> tensors, const BpeTokenizer& tok,
                            const std::string& chatTemplate, const std::string& source,
                            std::string* error) {
    if (!llama.ropeDivisors.empty() && llama.ropeScaling.type.empty()) {
        // A GGUF file's rope_freqs divisors without the parameters they came from: a config
        // without them would load with other rotary frequencies.
        *error = "the model's rotary frequency divisors (a GGUF file's rope_freqs) have no Hugging "
                 "Face rope_scaling to write them as; it cannot be saved as a folder";
        return false;
    }
    nlohmann::json config = huggingFaceLlamaConfig(llama);
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
    if (!chatTemplate.empty())
        tokenizerConfig["chat_template"] = chatTemplate;

    // Everything goes into a fresh folder beside the target, renamed into place at the end. A
    // taken target is refused before the weights are written, and again before the rename.
    const fs::path target(folder);
    if (targetTaken(target, folder, error))
        return false;
    const fs::path staging = target.string() + ".part";
    std::error_code ec;
    removeStaging(staging);
    if (!fs::create_directories(staging, ec) && ec) {
        *error = "cannot create " + staging.string() + ": " + ec.message();
        return false;
    }
    const bool written = writeSafetensors((staging / "model.safetensors").string(), tensors,
                                          {{"format", "pt"}, {"source", source}}, error) &&
                         writeJson(staging / "config.json", config, error) &&
                         writeJson(staging / "tokenizer.json", tok.toTokenizerJson(), error) &&
                         writeJson(staging / "tokenizer_config.json", tokenizerConfig, error);
    if (!written || targetTaken(target, folder, error)) {
        removeStaging(staging);
        return false;
    }
    fs::remove(target, ec);
    fs::rename(staging, target, ec);
    if (ec) {
        *error = "cannot rename " + staging.string() + ": " + ec.message();
        removeStaging(staging);
        return false;
    }
    return true;
}

} // namespace kwb::model
