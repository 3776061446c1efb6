// readLlamaWeights checks a model's settings against its tensors' shapes before it reads or
// allocates anything: a config that disagrees with the weights (or holds numbers no int holds)
// is refused by name instead of sizing caches and views from numbers the file does not back.
// Logits against transformers are in model.logits.
#include "engine/model/llama_weights.h"
#include "engine/model/safetensors_file.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace kwb::model {
namespace {

namespace fs = std::filesystem;

// A two-layer Llama folder: width 8, 2 heads of 4 (1 key/value head), feed-forward 16,
// vocabulary 10, with `change` applied to its config.json.
class TinyFolder {
public:
    explicit TinyFolder(const nlohmann::json& change = nlohmann::json::object(),
                        const std::map<std::string, std::vector<std::uint64_t>>& reshaped = {})
        : path_(fs::temp_directory_path() /
                ("kwb-llama-" + std::to_string(::getpid()) + "-" + std::to_string(next_++))) {
        fs::remove_all(path_);
        fs::create_directories(path_);
        nlohmann::json config = {{"model_type", "llama"},    {"num_hidden_layers", 2},
                                 {"num_attention_heads", 2}, {"num_key_value_heads", 1},
                                 {"hidden_size", 8},         {"intermediate_size", 16},
                                 {"vocab_size", 10},         {"max_position_embeddings", 64},
                                 {"rope_theta", 10000.0},    {"tie_word_embeddings", true}};
        if (change.is_object())
            config.update(change);
        for (auto it = change.begin(); change.is_object() && it != change.end(); ++it)
            if (it.value().is_null())
                config.erase(it.key());
        std::ofstream(path_ / "config.json") << config.dump();
        std::map<std::string, std::vector<std::uint64_t>> shapes{
            {"model.embed_tokens.weight", {10, 8}}, {"model.norm.weight", {8}}};
        for (int i = 0; i < 2; ++i) {
            const std::string l = "model.layers." + std::to_string(i) + ".";
            shapes[l + "input_layernorm.weight"] = {8};
            shapes[l + "post_attention_layernorm.weight"] = {8};
            shapes[l + "self_attn.q_proj.weight"] = {8, 8};
            shapes[l + "self_attn.k_proj.weight"] = {4, 8};
            shapes[l + "self_attn.v_proj.weight"] = {4, 8};
            shapes[l + "self_attn.o_proj.weight"] = {8, 8};
            shapes[l + "mlp.gate_proj.weight"] = {16, 8};
            shapes[l + "mlp.up_proj.weight"] = {16, 8};
            shapes[l + "mlp.down_proj.weight"] = {8, 16};
        }
        for (const auto& [name, shape] : reshaped)
            shapes[name] = shape;
        std::vector<SafetensorsWrite> tensors;
        for (const auto& [name, shape] : shapes) {
            std::uint64_t n = 1;
            for (std::uint64_t d : shape)
                n *= d;
            tensors.push_back({name, "F32", shape, std::vector<std::uint8_t>(n * 4, 0)});
        }
        std::string error;
        EXPECT_TRUE(writeSafetensors((path_ / "model.safetensors").string(), tensors, {}, &error))
            << error;
    }
    ~TinyFolder() { fs::remove_all(path_); }
    std::string path() const { return path_.string(); }

private:
    static inline int next_ = 0;
    fs::path path_;
};

TEST(LlamaWeights, AFolderWhoseSettingsMatchItsTensorsLoads) {
    TinyFolder folder;
    const LlamaWeights w = readLlamaWeights(folder.path());
    ASSERT_EQ(w.error, "");
    EXPECT_EQ(w.config.headDim, 4);
    EXPECT_EQ(w.tensors.size(), 20u);
    EXPECT_EQ(w.tensors.at("model.layers.1.self_attn.k_proj.weight").shape,
              (std::vector<std::int64_t>{4, 8}));
    // The settings alone: the same checks, no values read.
    const LlamaWeights settings = readLlamaSettings(folder.path());
    EXPECT_EQ(settings.error, "");
    EXPECT_TRUE(settings.tensors.empty());
}

TEST(LlamaWeights, SettingsThatDisagreeWithTheTensorsAreRefusedByName) {
    const auto errorOf =
        [](const nlohmann::json& change,
           const std::map<std::string, std::vector<std::uint64_t>>& reshaped = {}) {
            return readLlamaSettings(TinyFolder(change, reshaped).path()).error;
        };
    // A width the weights do not have (it once sized a cache of gigabytes).
    EXPECT_NE(errorOf({{"hidden_size", 1000000000}})
                  .find("model.embed_tokens.weight has the shape [10, 8]"),
              std::string::npos);
    // A head count that divides the width but not the projections (head size 2: the key
    // projection would have 2 rows, it has 4).
    EXPECT_NE(
        errorOf({{"num_attention_heads", 4}}).find("self_attn.k_proj.weight has the shape [4, 8]"),
        std::string::npos);
    // A key/value head count of 0 once divided by zero; 2 of 3 heads is no grouping.
    EXPECT_NE(errorOf({{"num_key_value_heads", 0}}).find("key/value head count is missing or 0"),
              std::string::npos);
    EXPECT_NE(errorOf({{"num_attention_heads", 3}, {"num_key_value_heads", 2}, {"head_dim", 4}})
                  .find("not a multiple"),
              std::string::npos);
    // Numbers no int holds, and fractions.
    EXPECT_NE(errorOf({{"hidden_size", 1e12}}).find("width is not a count"), std::string::npos);
    EXPECT_NE(errorOf({{"num_hidden_layers", 2.5}}).find("layer count is not a count"),
              std::string::npos);
    // More layers than the file holds stops at the first missing one.
    EXPECT_NE(errorOf({{"num_hidden_layers", 1000000000}}).find("no weight model.layers.2."),
              std::string::npos);
    // A transposed embedding.
    EXPECT_NE(errorOf({}, {{"model.embed_tokens.weight", {8, 10}}}).find("has the shape [8, 10]"),
              std::string::npos);
    // Rotary scaling this decoder does not compute is refused rather than ignored, and Llama 3's
    // without the context its wavelengths are measured against.
    EXPECT_NE(errorOf({{"rope_scaling", {{"rope_type", "yarn"}, {"factor", 8.0}}}})
                  .find("rope_type 'yarn' is not supported"),
              std::string::npos);
    EXPECT_NE(errorOf({{"rope_parameters", {{"rope_type", "dynamic"}, {"factor", 2.0}}}})
                  .find("rope_type 'dynamic' is not supported"),
              std::string::npos);
    EXPECT_NE(errorOf({{"rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}}}})
                  .find("needs original_max_position_embeddings"),
              std::string::npos);
    EXPECT_NE(errorOf({{"rope_scaling", {{"rope_type", "linear"}}}}).find("scaling factor"),
              std::string::npos);
}

TEST(LlamaWeights, RotaryScalingDividesEachFrequency) {
    // Head size 16, base 10000: wavelengths 2*pi*10000^(i/8) = 6.3, 19.9, 62.8, 199, ... positions.
    // Llama 3's scaling over an original context of 64 (low 1, high 4): under 16 kept, over 64
    // divided by the factor, between blended by how many waves fit the original context.
    RopeScaling llama3{"llama3", 8.0, 1.0, 4.0, 64.0};
    std::string error;
    const std::vector<double> d = ropeDivisorsFor(llama3, 10000.0, 16, error);
    ASSERT_EQ(error, "");
    ASSERT_EQ(d.size(), 8u);
    EXPECT_EQ(d[0], 1.0);
    const double pi = std::acos(-1.0);
    for (int i : {1, 2}) {
        const double blend = (64.0 / (2 * pi * std::pow(10000.0, i / 8.0)) - 1.0) / 3.0;
        EXPECT_NEAR(d[i], 1.0 / ((1.0 - blend) / 8.0 + blend), 1e-12) << i;
    }
    // 19.9 positions: 3.2 waves fit the original context, a blend of 0.74.
    EXPECT_NEAR(d[1], 1.29398, 1e-5);
    for (std::size_t i = 3; i < d.size(); ++i)
        EXPECT_EQ(d[i], 8.0) << i;
    // Linear: every frequency divided alike. None: no divisors.
    EXPECT_EQ(ropeDivisorsFor({"linear", 2.0}, 10000.0, 8, error),
              (std::vector<double>{2.0, 2.0, 2.0, 2.0}));
    EXPECT_TRUE(ropeDivisorsFor({}, 10000.0, 8, error).empty());

    // From a folder, either spelling (transformers 5's rope_parameters, rope_scaling before it).
    for (const nlohmann::json& change :
         {nlohmann::json{{"rope_scaling",
                          {{"rope_type", "llama3"},
                           {"factor", 8.0},
                           {"low_freq_factor", 1.0},
                           {"high_freq_factor", 4.0},
                           {"original_max_position_embeddings", 64}}}},
          nlohmann::json{{"rope_theta", nullptr},
                         {"rope_parameters",
                          {{"rope_type", "llama3"},
                           {"rope_theta", 10000.0},
                           {"factor", 8.0},
                           {"low_freq_factor", 1.0},
                           {"high_freq_factor", 4.0},
                           {"original_max_position_embeddings", 64}}}}}) {
        // Head size 4 here (width 8, 2 heads): wavelengths 6.3 and 628 positions.
        const LlamaWeights w = readLlamaSettings(TinyFolder(change).path());
        ASSERT_EQ(w.error, "") << change.dump();
        EXPECT_EQ(w.config.ropeScaling.type, "llama3");
        EXPECT_EQ(w.config.ropeDivisors, (std::vector<double>{1.0, 8.0})) << change.dump();
    }
}

TEST(LlamaWeights, AQwen2FolderLoadsWithItsAttentionBiases) {
    const std::map<std::string, std::vector<std::uint64_t>> biases{
        {"model.layers.0.self_attn.q_proj.bias", {8}},
        {"model.layers.0.self_attn.k_proj.bias", {4}},
        {"model.layers.0.self_attn.v_proj.bias", {4}},
        {"model.layers.1.self_attn.q_proj.bias", {8}},
        {"model.layers.1.self_attn.k_proj.bias", {4}},
        {"model.layers.1.self_attn.v_proj.bias", {4}}};
    TinyFolder folder({{"model_type", "qwen2"}, {"use_sliding_window", false}}, biases);
    const LlamaWeights w = readLlamaWeights(folder.path());
    ASSERT_EQ(w.error, "");
    EXPECT_TRUE(w.config.qkvBias);
    EXPECT_EQ(w.config.family, "qwen2");
    EXPECT_EQ(w.tensors.at("model.layers.1.self_attn.k_proj.bias").shape,
              (std::vector<std::int64_t>{4}));
    // Without its biases, or with one of the wrong size, a Qwen2 folder is refused by name.
    EXPECT_NE(readLlamaSettings(TinyFolder(nlohmann::json{{"model_type", "qwen2"}}).path())
                  .error.find("no weight model.layers.0.self_attn.q_proj.bias"),
              std::string::npos);
    auto wrong = biases;
    wrong["model.layers.1.self_attn.v_proj.bias"] = {8};
    EXPECT_NE(readLlamaSettings(TinyFolder({{"model_type", "qwen2"}}, wrong).path())
                  .error.find("model.layers.1.self_attn.v_proj.bias has the shape [8]"),
              std::string::npos);
    // A Llama folder has no biases to read.
    EXPECT_FALSE(readLlamaSettings(TinyFolder().path()).config.qkvBias);
}

TEST(LlamaWeights, LayoutsTheDecoderDoesNotComputeAreRefusedByName) {
    const auto errorOf = [](const nlohmann::json& change) {
        return readLlamaSettings(TinyFolder(change).path()).error;
    };
    // Llama's attention_bias also biases o_proj; mlp_bias the feed-forward; Qwen2's sliding
    // window hides keys from a query. Run without them, each would give other logits.
    EXPECT_NE(errorOf({{"attention_bias", true}}).find("attention_bias true is not supported"),
              std::string::npos);
    EXPECT_NE(errorOf({{"mlp_bias", true}}).find("mlp_bias true is not supported"),
              std::string::npos);
    EXPECT_NE(errorOf({{"model_type", "qwen2"}, {"use_sliding_window", true}})
                  .find("use_sliding_window true is not supported"),
              std::string::npos);
    EXPECT_EQ(errorOf({{"attention_bias", false}, {"mlp_bias", false}}), "");
}

TEST(LlamaWeights, TheRotaryBaseIsReadWhereTransformersFiveWritesIt) {
    TinyFolder folder({{"rope_theta", nullptr},
                       {"rope_parameters", {{"rope_theta", 100000.0}, {"rope_type", "default"}}}});
    const LlamaWeights w = readLlamaSettings(folder.path());
    ASSERT_EQ(w.error, "");
    EXPECT_EQ(w.config.ropeBase, 100000.0);
}

} // namespace
} // namespace kwb::model
