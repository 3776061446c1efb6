// safetensors written and read back, malformed files refused with a reason, a sharded folder
// found through its index, and a GGUF model converted to a Hugging Face folder whose
// tokenizer.json is the same tokenizer. transformers' reading of real converted weights is in
// model.reference.
#include "engine/model/bpe_tokenizer.h"
#include "engine/model/gguf_file.h"
#include "engine/model/gguf_to_huggingface.h"
#include "engine/model/safetensors_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>

namespace kwb::model {
namespace {

namespace fs = std::filesystem;

class Folder {
public:
    Folder()
        : path_(fs::temp_directory_path() /
                ("kwb-st-" + std::to_string(::getpid()) + "-" + std::to_string(next_++))) {
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~Folder() { fs::remove_all(path_); }
    fs::path operator/(const std::string& name) const { return path_ / name; }
    const fs::path& path() const { return path_; }

private:
    static inline int next_ = 0;
    fs::path path_;
};

SafetensorsWrite floats(const std::string& name, std::vector<std::uint64_t> shape,
                        const std::vector<float>& values) {
    SafetensorsWrite w{name, "F32", std::move(shape), {}};
    w.bytes.resize(values.size() * 4);
    std::memcpy(w.bytes.data(), values.data(), w.bytes.size());
    return w;
}

TEST(SafetensorsFile, WritesAndReadsBackEveryTensorAndTheMetadata) {
    Folder dir;
    const std::string path = (dir / "w.safetensors").string();
    SafetensorsWrite half{"half", "F16", {2}, {0x00, 0x3C, 0x00, 0xC0}}; // 1.0, -2.0
    std::string error;
    ASSERT_TRUE(writeSafetensors(
        path,
        {floats("b.weight", {2, 3}, {1, 2, 3, 4, 5, 6}), floats("a.bias", {3}, {7, 8, 9}), half},
        {{"format", "pt"}}, &error))
        << error;
    EXPECT_FALSE(fs::exists(path + ".part"));
    // The data starts 8-byte aligned, as the reference writer pads it.
    std::ifstream in(path, std::ios::binary);
    std::uint64_t header = 0;
    in.read(reinterpret_cast<char*>(&header), 8);
    EXPECT_EQ(header % 8, 0u);
    const auto opened = SafetensorsFile::open(path);
    ASSERT_TRUE(opened) << opened.error;
    EXPECT_EQ(opened.file->metadata().at("format"), "pt");
    ASSERT_EQ(opened.file->tensors().size(), 3u);
    EXPECT_EQ(opened.file->tensors()[0].name, "a.bias"); // written in name order
    const SafetensorsTensor* b = opened.file->tensor("b.weight");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->shape, (std::vector<std::uint64_t>{2, 3}));
    EXPECT_EQ(opened.file->toFloat(*b, &error), (std::vector<float>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(opened.file->toFloat(*opened.file->tensor("half"), &error),
              (std::vector<float>{1.0f, -2.0f}));
}

TEST(SafetensorsFile, ATensorWhoseSizeDoesNotMatchItsShapeIsNotWritten) {
    Folder dir;
    std::string error;
    EXPECT_FALSE(writeSafetensors((dir / "x.safetensors").string(), {floats("x", {4}, {1, 2, 3})},
                                  {}, &error));
    EXPECT_NE(error.find("does not match"), std::string::npos) << error;
    EXPECT_FALSE(fs::exists(dir / "x.safetensors"));
}

TEST(SafetensorsFile, MalformedFilesAreRefusedWithAReason) {
    Folder dir;
    const auto write = [&](const std::string& name, const std::string& header,
                           std::size_t dataBytes) {
        const fs::path p = dir / name;
        std::ofstream out(p, std::ios::binary);
        const std::uint64_t size = header.size();
        out.write(reinterpret_cast<const char*>(&size), 8);
        out << header << std::string(dataBytes, '\0');
        return p.string();
    };
    const auto errorOf = [](const std::string& path) { return SafetensorsFile::open(path).error; };
    EXPECT_NE(errorOf(write("json", "{not json", 0)).find("not a JSON object"), std::string::npos);
    EXPECT_NE(
        errorOf(write("beyond", R"({"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8))
            .find("outside the file"),
        std::string::npos);
    EXPECT_NE(
        errorOf(write("size", R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", 16))
            .find("wrong size"),
        std::string::npos);
    EXPECT_NE(errorOf(write("dtype", R"({"t":{"dtype":"Q9","shape":[1],"data_offsets":[0,1]}})", 1))
                  .find("unknown dtype"),
              std::string::npos);
    {
        std::ofstream((dir / "huge").string(), std::ios::binary)
            << std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) << "{}";
        EXPECT_NE(errorOf((dir / "huge").string()).find("does not fit"), std::string::npos);
    }
    EXPECT_NE(errorOf((dir / "absent").string()).find("cannot open"), std::string::npos);
    // Two weights reading the same bytes: refused, as the safetensors library refuses them.
    EXPECT_NE(errorOf(write("overlap",
                            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                            12))
                  .find("share the bytes"),
              std::string::npos);
}

TEST(SafetensorsModel, FindsEachTensorInTheShardTheIndexNames) {
    Folder dir;
    std::string error;
    ASSERT_TRUE(writeSafetensors((dir / "model-00001-of-00002.safetensors").string(),
                                 {floats("a", {1}, {1})}, {}, &error));
    ASSERT_TRUE(writeSafetensors((dir / "model-00002-of-00002.safetensors").string(),
                                 {floats("b", {1}, {2})}, {}, &error));
    std::ofstream(dir / "model.safetensors.index.json")
        << R"({"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})";
    const auto opened = SafetensorsModel::open(dir.path().string());
    ASSERT_TRUE(opened) << opened.error;
    EXPECT_EQ(opened.model->files().size(), 2u);
    const auto [file, tensor] = opened.model->find("b");
    ASSERT_NE(tensor, nullptr);
    EXPECT_EQ(file->toFloat(*tensor, &error), (std::vector<float>{2}));
    EXPECT_EQ(opened.model->find("c").second, nullptr);
    // An index may not send the reader outside the folder.
    std::ofstream(dir / "model.safetensors.index.json")
        << R"({"weight_map": {"a": "../x.safetensors"}})";
    EXPECT_NE(SafetensorsModel::open(dir.path().string()).error.find("names no shard"),
              std::string::npos);
}

TEST(GgufToHuggingFace, TheConvertedTokenizerJsonIsTheSameTokenizer) {
    Folder dir;
    const std::string tiny = std::string(KWB_TEST_DATA_DIR) + "/model/tiny.gguf";
    const std::string out = (dir / "hf").string();
    std::string error;
    ASSERT_TRUE(convertGgufToHuggingFace(tiny, out, &error)) << error;
    std::ifstream configFile(out + "/config.json");
    const nlohmann::json config = nlohmann::json::parse(configFile);
    EXPECT_EQ(config["num_attention_heads"], 4);
    EXPECT_EQ(config["num_key_value_heads"], 2);
    EXPECT_EQ(config["tie_word_embeddings"], true); // no output.weight in the file
    const auto gguf = GgufFile::open(tiny);
    const auto fromGguf = BpeTokenizer::fromGguf(*gguf.file);
    const auto fromJson = BpeTokenizer::fromTokenizerJson(out + "/tokenizer.json");
    ASSERT_TRUE(fromJson) << fromJson.error;
    for (const std::string text :
         {"the cat in a hat", "<|im_start|>héllo 123<|im_end|>", " \n\t x"})
        EXPECT_EQ(fromJson.tokenizer->encode(text), fromGguf.tokenizer->encode(text)) << text;
    // Converting again into the same, now non-empty, folder is refused and leaves it intact.
    EXPECT_FALSE(convertGgufToHuggingFace(tiny, out, &error));
    EXPECT_NE(error.find("not empty"), std::string::npos) << error;
    EXPECT_TRUE(fs::exists(out + "/config.json"));
    EXPECT_FALSE(fs::exists(out + ".part"));
}

} // namespace
} // namespace kwb::model
