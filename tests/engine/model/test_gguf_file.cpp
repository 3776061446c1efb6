// The GGUF reader on tests/data/model/tiny.gguf (written by make_tiny_gguf.py with the gguf
// package): metadata, tensor table, every dequantized type against gguf's own values, and
// malformed files that must be errors, not crashes.
#include "engine/model/ggml_blocks.h"
#include "engine/model/gguf_file.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>

namespace kwb::model {
namespace {

namespace fs = std::filesystem;

const std::string kTiny = std::string(KWB_TEST_DATA_DIR) + "/model/tiny.gguf";

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

class ScratchFile {
public:
    explicit ScratchFile(const std::string& bytes)
        : path_(fs::temp_directory_path() /
                ("kwb-gguf-test-" + std::to_string(::getpid()) + "-" + std::to_string(next_++))) {
        std::ofstream(path_, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    }
    ~ScratchFile() { fs::remove(path_); }
    std::string path() const { return path_.string(); }

private:
    static inline int next_ = 0;
    fs::path path_;
};

TEST(GgufFile, ReadsTheHeaderMetadataAndTensorTable) {
    const auto opened = GgufFile::open(kTiny);
    ASSERT_TRUE(opened) << opened.error;
    const GgufFile& f = *opened.file;
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.string("general.architecture"), "llama");
    EXPECT_EQ(f.integer("llama.block_count"), 2);
    EXPECT_EQ(f.integer("llama.attention.head_count_kv"), 2);
    EXPECT_NEAR(*f.number("llama.rope.freq_base"), 10000.0, 1e-9);
    ASSERT_NE(f.find("tokenizer.ggml.tokens"), nullptr);
    EXPECT_EQ(f.find("tokenizer.ggml.tokens")->strings()->size(), 263u);
    EXPECT_EQ(f.find("tokenizer.ggml.token_type")->integers()->back(), 3);
    ASSERT_EQ(f.tensors().size(), 25u); // one of each of five types, then the decoder's 20
    const GgufTensorInfo* q8 = f.tensor("q8_0");
    ASSERT_NE(q8, nullptr);
    // GGUF order: the innermost dimension first (numpy's [2, 32] is stored as {32, 2}).
    EXPECT_EQ(q8->dims, (std::vector<std::uint64_t>{32, 2}));
    EXPECT_EQ(ggmlTypeName(q8->type), "Q8_0");
    EXPECT_EQ(f.tensor("missing"), nullptr);
}

TEST(GgufFile, DequantizesEveryTypeItReadsAsGgufDoes) {
    const auto opened = GgufFile::open(kTiny);
    ASSERT_TRUE(opened) << opened.error;
    // The ramp -4.0, -3.875, ... and the first values gguf.quants.dequantize gives for it.
    const std::map<std::string, std::vector<float>> expected{
        {"f32", {-4.0f, -3.875f, -3.75f, -3.625f}},
        {"f16", {-4.0f, -3.875f, -3.75f, -3.625f}},
        {"q8_0", {-3.999755859375f, -3.873779296875f, -3.747802734375f, -3.621826171875f}},
        {"q4_0", {-4.0f, -4.0f, -3.5f, -3.5f}},
        {"q4_1", {-4.0f, -4.0f, -3.74169921875f, -3.74169921875f}},
    };
    for (const auto& [name, first] : expected) {
        std::string error;
        const std::vector<float> values =
            opened.file->dequantize(*opened.file->tensor(name), &error);
        ASSERT_EQ(values.size(), 64u) << name << ": " << error;
        for (std::size_t i = 0; i < first.size(); ++i)
            EXPECT_FLOAT_EQ(values[i], first[i]) << name << "[" << i << "]";
    }
}

TEST(GgufFile, EveryTruncationIsAnErrorNotACrash) {
    const std::string whole = readAll(kTiny);
    ASSERT_GT(whole.size(), 1000u);
    int errors = 0;
    // Every cut inside the header and metadata, then a sample of cuts through the tensor data.
    for (std::size_t cut = 0; cut < whole.size(); cut += cut < 4096 ? 1 : 97) {
        const ScratchFile file(whole.substr(0, cut));
        const auto opened = GgufFile::open(file.path());
        if (!opened) {
            ++errors;
            EXPECT_FALSE(opened.error.empty());
        }
    }
    EXPECT_GT(errors, 4000);
}

TEST(GgufFile, LiesInTheHeaderAreNamed) {
    std::string bytes = readAll(kTiny);
    {
        std::string bad = bytes;
        bad[0] = 'X';
        const auto opened = GgufFile::open(ScratchFile(bad).path());
        EXPECT_NE(opened.error.find("not a GGUF file"), std::string::npos) << opened.error;
    }
    {
        std::string bad = bytes;
        bad[4] = 7; // version 7
        const auto opened = GgufFile::open(ScratchFile(bad).path());
        EXPECT_NE(opened.error.find("version 7"), std::string::npos) << opened.error;
    }
    {
        std::string bad = bytes;
        for (int i = 8; i < 16; ++i)
            bad[std::size_t(i)] = char(0x7F); // a tensor count far beyond the file
        const auto opened = GgufFile::open(ScratchFile(bad).path());
        EXPECT_NE(opened.error.find("more entries than the file"), std::string::npos)
            << opened.error;
    }
    {
        // An array that claims far more elements than the rest of the file could hold (found by
        // the fuzzer: reserving for the claim took gigabytes). Header: magic, version 3, no
        // tensors, one entry "k", an array (9) of strings (8) claiming 2^31 elements.
        std::string lie = "GGUF";
        const auto put = [&](std::uint64_t value, int bytes) {
            for (int i = 0; i < bytes; ++i)
                lie += char((value >> (8 * i)) & 0xFF);
        };
        put(3, 4);
        put(0, 8);
        put(1, 8);
        put(1, 8);
        lie += "k";
        put(9, 4);
        put(8, 4);
        put(std::uint64_t(1) << 31, 8);
        lie += std::string(64, '\0');
        const auto opened = GgufFile::open(ScratchFile(lie).path());
        EXPECT_NE(opened.error.find("claims 2147483648 elements, more than the file holds"),
                  std::string::npos)
            << opened.error;
    }
    EXPECT_NE(GgufFile::open("/no/such/file.gguf").error.find("cannot open"), std::string::npos);
}

TEST(GgmlBlocks, HalfAndBfloatConversions) {
    EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
    EXPECT_EQ(halfToFloat(0xC000), -2.0f);
    EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
    EXPECT_FLOAT_EQ(halfToFloat(0x0001), 5.9604645e-8f); // the smallest subnormal
    EXPECT_TRUE(std::isinf(halfToFloat(0x7C00)));
    EXPECT_TRUE(std::isnan(halfToFloat(0x7E00)));
    EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
    EXPECT_EQ(bfloat16ToFloat(0x3F80), 1.0f);
    EXPECT_EQ(bfloat16ToFloat(0xC040), -3.0f);
}

TEST(GgmlBlocks, SizesThatDoNotMatchAreRefused) {
    std::vector<std::uint8_t> in(18);
    std::vector<float> out(31); // Q4_0 blocks hold 32
    EXPECT_FALSE(dequantizeBlocks(std::uint32_t(GgmlType::Q4_0), in, out));
    out.resize(32);
    EXPECT_TRUE(dequantizeBlocks(std::uint32_t(GgmlType::Q4_0), in, out));
    EXPECT_FALSE(dequantizeBlocks(std::uint32_t(GgmlType::Q6_K), in, out)); // no reader
    EXPECT_FALSE(dequantizeBlocks(99, in, out));
}

} // namespace
} // namespace kwb::model
