#include "engine/model/safetensors_file.h"

#include "engine/model/ggml_blocks.h"
#include "engine/model/gguf_file.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace kwb::model {

namespace fs = std::filesystem;

namespace {

// A header larger than this is not a weight file (the format's own limit is 100 MB).
constexpr std::uint64_t kMaxHeader = 100ull * 1024 * 1024;

} // namespace

std::size_t safetensorsDtypeBytes(const std::string& dtype) {
    static const std::map<std::string, std::size_t> sizes{
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1},
        {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
        {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
    const auto found = sizes.find(dtype);
    return found == sizes.end() ? 0 : found->second;
}

std::uint64_t SafetensorsTensor::elements() const {
    std::uint64_t n = 1;
    for (std::uint64_t d : shape)
        n *= d;
    return n;
}

SafetensorsFile::~SafetensorsFile() = default;

SafetensorsFile::Opened SafetensorsFile::open(const std::string& path) {
    Opened out;
    std::unique_ptr<SafetensorsFile> file(new SafetensorsFile);
    file->path_ = path;
    if (!file->mapped_.open(path, &out.error))
        return out;
    if (file->mapped_.size() < 8) {
        out.error = path + " is not a safetensors file (too short)";
        return out;
    }
    std::uint64_t headerSize = 0;
    std::memcpy(&headerSize, file->mapped_.data(), 8);
    if (headerSize > kMaxHeader || headerSize > file->mapped_.size() - 8) {
        out.error = path + ": the header length (" + std::to_string(headerSize) +
                    " bytes) does not fit the file";
        return out;
    }
    file->dataOffset_ = 8 + std::size_t(headerSize);
    const std::uint64_t dataSize = file->mapped_.size() - file->dataOffset_;
    const nlohmann::json header = nlohmann::json::parse(
        file->mapped_.data() + 8, file->mapped_.data() + 8 + headerSize, nullptr, false);
    if (header.is_discarded() || !header.is_object()) {
        out.error = path + ": the header is not a JSON object";
        return out;
    }
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            if (entry.is_object())
                for (const auto& [key, value] : entry.items())
                    if (value.is_string())
                        file->metadata_[key] = value.get<std::string>();
            continue;
        }
        // A named copy: lambdas may not capture structured bindings before C++20's P1091 in clang.
        const std::string tensorName = name;
        const auto bad = [&](const std::string& why) {
            out.error = path + ": tensor " + tensorName + " " + why;
        };
        if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
            !entry.contains("shape") || !entry["shape"].is_array() ||
            !entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
            entry["data_offsets"].size() != 2) {
            bad("lacks dtype, shape or data_offsets");
            return out;
        }
        SafetensorsTensor t;
        t.name = name;
        t.dtype = entry["dtype"].get<std::string>();
        const std::size_t width = safetensorsDtypeBytes(t.dtype);
        if (width == 0) {
            bad("has unknown dtype " + t.dtype);
            return out;
        }
        std::uint64_t elements = 1;
        for (const nlohmann::json& d : entry["shape"]) {
            if (!d.is_number_unsigned() ||
                __builtin_mul_overflow(elements, d.get<std::uint64_t>(), &elements)) {
                bad("has an impossible shape");
                return out;
            }
            t.shape.push_back(d.get<std::uint64_t>());
        }
        const nlohmann::json& offsets = entry["data_offsets"];
        if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
            bad("has offsets that are not byte counts");
            return out;
        }
        t.begin = offsets[0].get<std::uint64_t>();
        t.end = offsets[1].get<std::uint64_t>();
        std::uint64_t bytes = 0;
        if (t.begin > t.end || t.end > dataSize ||
            __builtin_mul_overflow(elements, std::uint64_t(width), &bytes) ||
            bytes != t.end - t.begin) {
            bad("has data outside the file or of the wrong size");
            return out;
        }
        file->tensors_.push_back(std::move(t));
    }
    // The safetensors format has each tensor's bytes to itself: overlapping ranges (two
    // weights reading the same bytes) are a damaged or forged file, refused as the reference
    // library refuses them.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    for (const SafetensorsTensor& t : file->tensors_)
        if (t.end > t.begin)
            ranges.emplace_back(t.begin, t.end);
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 1; i < ranges.size(); ++i)
        if (ranges[i].first < ranges[i - 1].second) {
            out.error = path + ": two tensors share the bytes from " +
                        std::to_string(ranges[i].first) + " of the data section";
            return out;
        }
    out.file = std::move(file);
    return out;
}

const SafetensorsTensor* SafetensorsFile::tensor(const std::string& name) const {
    for (const SafetensorsTensor& t : tensors_)
        if (t.name == name)
            return &t;
    return nullptr;
}

std::span<const std::uint8_t> SafetensorsFile::bytes(const SafetensorsTensor& tensor) const {
    return {mapped_.data() + dataOffset_ + tensor.begin, std::size_t(tensor.end - tensor.begin)};
}

std::vector<float> SafetensorsFile::toFloat(const SafetensorsTensor& tensor,
                                            std::string* error) const {
    // The same element conversions as GGUF's unquantized types.
    static const std::map<std::string, GgmlType> asGgml{
        {"F32", GgmlType::F32}, {"F16", GgmlType::F16}, {"BF16", GgmlType::BF16}};
    const auto type = asGgml.find(tensor.dtype);
    std::vector<float> out(type == asGgml.end() ? 0 : std::size_t(tensor.elements()));
    if (type == asGgml.end() ||
        !dequantizeBlocks(std::uint32_t(type->second), bytes(tensor), out)) {
        if (error)
            *error = "tensor " + tensor.name + " is " + tensor.dtype + ", not a float type";
        return {};
    }
    return out;
}

bool writeSafetensors(const std::string& path, const std::vector<SafetensorsWrite>& tensors,
                      const std::map<std::string, std::string>& metadata, std::string* error) {
    std::vector<const SafetensorsWrite*> ordered;
    std::set<std::string> names;
    for (const SafetensorsWrite& t : tensors) {
        std::uint64_t elements = 1;
        for (std::uint64_t d : t.shape)
            elements *= d;
        if (safetensorsDtypeBytes(t.dtype) == 0 ||
            elements * safetensorsDtypeBytes(t.dtype) != t.bytes.size() ||
            !names.insert(t.name).second) {
            *error = "tensor " + t.name +
                     ": unknown dtype, a size that does not match its shape, "
                     "or a repeated name";
            return false;
        }
        ordered.push_back(&t);
    }
    std::sort(ordered.begin(), ordered.end(),
              [](const auto* a, const auto* b) { return a->name < b->name; });
    nlohmann::json header = nlohmann::json::object();
    if (!metadata.empty())
        header["__metadata__"] = metadata;
    std::uint64_t offset = 0;
    for (const SafetensorsWrite* t : ordered) {
        header[t->name] = {{"dtype", t->dtype},
                           {"shape", t->shape},
                           {"data_offsets", {offset, offset + t->bytes.size()}}};
        offset += t->bytes.size();
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' '); // the data starts 8-byte aligned
    const fs::path target(path);
    const fs::path partial = target.string() + ".part";
    {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        const std::uint64_t size = text.size();
        out.write(reinterpret_cast<const char*>(&size), 8);
        out.write(text.data(), std::streamsize(text.size()));
        for (const SafetensorsWrite* t : ordered)
            out.write(reinterpret_cast<const char*>(t->bytes.data()),
                      std::streamsize(t->bytes.size()));
        if (!out.flush()) {
            *error = "cannot write " + partial.string();
            std::error_code ec;
            fs::remove(partial, ec);
            return false;
        }
    }
    std::error_code ec;
    fs::rename(partial, target, ec);
    if (ec) {
        *error = "cannot rename " + partial.string() + ": " + ec.message();
        fs::remove(partial, ec);
        return false;
    }
    return true;
}

SafetensorsModel::Opened SafetensorsModel::open(const std::string& folder) {
    Opened out;
    const fs::path dir(folder);
    std::vector<std::string> shards;
    const fs::path index = dir / "model.safetensors.index.json";
    std::error_code ec;
    if (fs::exists(index, ec)) {
        std::ifstream in(index);
        const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
        if (!doc.is_object() || !doc.contains("weight_map") || !doc["weight_map"].is_object()) {
            out.error = index.string() + " has no weight_map";
            return out;
        }
        std::set<std::string> unique;
        for (const auto& [name, file] : doc["weight_map"].items()) {
            // A shard is a file name in the folder, never a path elsewhere.
            if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos) {
                out.error = index.string() + ": tensor " + name + " names no shard in the folder";
                return out;
            }
            unique.insert(file.get<std::string>());
        }
        shards.assign(unique.begin(), unique.end());
    } else if (fs::exists(dir / "model.safetensors", ec)) {
        shards.push_back("model.safetensors");
    } else {
        out.error = folder + " has neither model.safetensors nor model.safetensors.index.json";
        return out;
    }
    auto model = std::make_unique<SafetensorsModel>();
    for (const std::string& shard : shards) {
        auto opened = SafetensorsFile::open((dir / shard).string());
        if (!opened) {
            out.error = opened.error;
            return out;
        }
        const std::size_t f = model->files_.size();
        for (std::size_t t = 0; t < opened.file->tensors().size(); ++t)
            model->where_[opened.file->tensors()[t].name] = {f, t};
        model->files_.push_back(std::move(opened.file));
    }
    out.model = std::move(model);
    return out;
}

std::pair<const SafetensorsFile*, const SafetensorsTensor*>
SafetensorsModel::find(const std::string& name) const {
    const auto found = where_.find(name);
    if (found == where_.end())
        return {nullptr, nullptr};
    const SafetensorsFile* file = files_[found->second.first].get();
    return {file, &file->tensors()[found->second.second]};
}

} // namespace kwb::model
