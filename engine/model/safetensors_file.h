#pragma once

#include "engine/model/mapped_file.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace kwb::model {

// One tensor of a safetensors file: its dtype as the format spells it ("F32", "BF16", ...),
// its shape (outermost first, as PyTorch), and where its bytes lie.
struct SafetensorsTensor {
    std::string name;
    std::string dtype;
    std::vector<std::uint64_t> shape;
    std::uint64_t begin = 0; // byte offsets into the data section
    std::uint64_t end = 0;
    std::uint64_t elements() const;
};

// A safetensors file (Hugging Face's weight format): an 8-byte header length, a JSON header,
// then the raw little-endian data, mapped read-only. Every offset, shape and dtype is checked
// against the file before use: a malformed file is an error naming what is wrong.
class SafetensorsFile {
public:
    struct Opened;
    static Opened open(const std::string& path);

    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const std::string& path() const { return path_; }
    const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
    const SafetensorsTensor* tensor(const std::string& name) const;
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    std::span<const std::uint8_t> bytes(const SafetensorsTensor& tensor) const;
    // F32, F16 and BF16 as floats; empty with `error` set for other dtypes.
    std::vector<float> toFloat(const SafetensorsTensor& tensor, std::string* error) const;

private:
    SafetensorsFile() = default;

    std::string path_;
    std::vector<SafetensorsTensor> tensors_;
    std::map<std::string, std::string> metadata_;
    MappedFile mapped_;
    std::size_t dataOffset_ = 0;
};

struct SafetensorsFile::Opened {
    std::unique_ptr<SafetensorsFile> file;
    std::string error;
    explicit operator bool() const { return file != nullptr; }
};

// Bytes per element of a safetensors dtype; 0 for one this reader does not know.
std::size_t safetensorsDtypeBytes(const std::string& dtype);

// A tensor to write: its bytes are little-endian elements of `dtype`, shape outermost first.
struct SafetensorsWrite {
    std::string name;
    std::string dtype;
    std::vector<std::uint64_t> shape;
    std::vector<std::uint8_t> bytes;
};

// Writes a safetensors file (header entries in name order, padded to 8 bytes, as the reference
// writer does) through a temporary file renamed into place; false with `error` on failure.
bool writeSafetensors(const std::string& path, const std::vector<SafetensorsWrite>& tensors,
                      const std::map<std::string, std::string>& metadata, std::string* error);

// A Hugging Face model folder's weights: model.safetensors, or the shards that
// model.safetensors.index.json names; each tensor found in the file that holds it.
class SafetensorsModel {
public:
    struct Opened;
    static Opened open(const std::string& folder);

    const std::vector<std::unique_ptr<SafetensorsFile>>& files() const { return files_; }
    // The tensor and the file it lies in; {nullptr, nullptr} when absent.
    std::pair<const SafetensorsFile*, const SafetensorsTensor*> find(const std::string& name) const;
    std::size_t tensorCount() const { return where_.size(); }

private:
    std::vector<std::unique_ptr<SafetensorsFile>> files_;
    std::map<std::string, std::pair<std::size_t, std::size_t>> where_; // name -> (file, tensor)
};

struct SafetensorsModel::Opened {
    std::unique_ptr<SafetensorsModel> model;
    std::string error;
    explicit operator bool() const { return model != nullptr; }
};

} // namespace kwb::model
