#pragma once

#include "engine/model/mapped_file.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace kwb::model {

// One metadata value of a GGUF file. Integers keep their sign, floats are widened to double,
// arrays keep their element kind (the tokenizer's tokens, merges and token types are arrays).
struct GgufValue {
    using Array = std::variant<std::vector<std::int64_t>, std::vector<double>,
                               std::vector<std::string>, std::vector<bool>>;
    std::variant<std::int64_t, std::uint64_t, double, bool, std::string, Array> value;

    std::optional<std::int64_t> integer() const; // any integer kind that fits
    std::optional<double> number() const;        // integers and floats
    const std::string* string() const;
    const std::vector<std::string>* strings() const;
    const std::vector<std::int64_t>* integers() const;
};

// ggml's tensor element types this reader knows by name; dequantize() reads the ones marked.
enum class GgmlType : std::uint32_t {
    F32 = 0,  // dequantize
    F16 = 1,  // dequantize
    Q4_0 = 2, // dequantize
    Q4_1 = 3, // dequantize
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8, // dequantize
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    BF16 = 30, // dequantize
};

std::string ggmlTypeName(std::uint32_t type); // "Q4_1", or "type 17"

struct GgufTensorInfo {
    std::string name;
    // GGUF's order: dims[0] is the innermost (contiguous) one, so a PyTorch weight of shape
    // [out, in] is stored with dims {in, out}.
    std::vector<std::uint64_t> dims;
    std::uint32_t type = 0;
    std::uint64_t offset = 0; // from the start of the data section
    std::uint64_t elements() const;
};

// A GGUF (version 2 or 3) model file: its metadata and tensor table, read with bounds checks
// (a truncated or malformed file is an error naming what is wrong, never a crash), and the
// tensor data mapped read-only, not copied: a 100 MB model costs no resident memory until a
// tensor is dequantized.
class GgufFile {
public:
    struct Opened;
    static Opened open(const std::string& path);

    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    std::uint32_t version() const { return version_; }
    const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
    const GgufValue* find(const std::string& key) const;
    std::optional<std::int64_t> integer(const std::string& key) const;
    std::optional<double> number(const std::string& key) const;
    std::string string(const std::string& key, const std::string& fallback = {}) const;

    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
    const GgufTensorInfo* tensor(const std::string& name) const;
    // The tensor's elements as floats, in GGUF order (dims[0] fastest). Empty with `error` set
    // for a type this reader cannot dequantize or data outside the file.
    std::vector<float> dequantize(const GgufTensorInfo& tensor, std::string* error) const;
    // The raw bytes of a tensor (empty when outside the file).
    std::span<const std::uint8_t> bytes(const GgufTensorInfo& tensor) const;

private:
    GgufFile() = default;

    std::uint32_t version_ = 0;
    std::map<std::string, GgufValue> metadata_;
    std::vector<GgufTensorInfo> tensors_;
    MappedFile mapped_;
    std::size_t dataOffset_ = 0;
};

struct GgufFile::Opened {
    std::unique_ptr<GgufFile> file;
    std::string error; // set when `file` is null
    explicit operator bool() const { return file != nullptr; }
};

// Bytes one tensor of `type` with `elements` elements takes; nullopt for an unknown type or a
// count that is not a whole number of blocks.
std::optional<std::uint64_t> ggmlTensorBytes(std::uint32_t type, std::uint64_t elements);

} // namespace kwb::model
