#include "engine/model/gguf_file.h"

#include "engine/model/ggml_blocks.h"

#include <cstring>
#include <limits>
#include <stdexcept>

namespace kwb::model {

namespace {

// GGUF's value kinds (gguf_type).
enum Kind : std::uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    ArrayKind = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};

// A bounds-checked cursor over the mapped file: every read past the end throws, so a truncated
// or lying header becomes one error message.
class Cursor {
public:
    Cursor(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

    template <typename T>
    T read(const char* what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, data_ + at_, sizeof v);
        at_ += sizeof v;
        return v;
    }
    std::string readString(const char* what) {
        const std::uint64_t length = read<std::uint64_t>(what);
        need(length, what);
        std::string s(reinterpret_cast<const char*>(data_ + at_), length);
        at_ += length;
        return s;
    }
    std::size_t at() const { return at_; }
    std::size_t remaining() const { return size_ - at_; }

private:
    void need(std::uint64_t bytes, const char* what) const {
        if (bytes > size_ - at_)
            throw std::runtime_error(std::string("the file ends inside ") + what);
    }
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t at_ = 0;
};

// Arrays can be long (49k tokens) but not longer than the file could hold.
constexpr std::uint64_t kMaxArray = std::uint64_t(1) << 32;

std::int64_t readSigned(Cursor& c, std::uint32_t kind, const char* what) {
    switch (kind) {
    case U8:
        return c.read<std::uint8_t>(what);
    case I8:
        return c.read<std::int8_t>(what);
    case U16:
        return c.read<std::uint16_t>(what);
    case I16:
        return c.read<std::int16_t>(what);
    case U32:
        return c.read<std::uint32_t>(what);
    case I32:
        return c.read<std::int32_t>(what);
    case I64:
        return c.read<std::int64_t>(what);
    case U64: {
        const std::uint64_t v = c.read<std::uint64_t>(what);
        if (v > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
            throw std::runtime_error(std::string("an array value out of range in ") + what);
        return std::int64_t(v);
    }
    default:
        throw std::runtime_error("not an integer kind");
    }
}

GgufValue readValue(Cursor& c, std::uint32_t kind, const std::string& key) {
    const char* what = key.c_str();
    GgufValue v;
    switch (kind) {
    case U8:
    case I8:
    case U16:
    case I16:
    case U32:
    case I32:
    case I64:
        v.value = readSigned(c, kind, what);
        return v;
    case U64:
        v.value = c.read<std::uint64_t>(what);
        return v;
    case F32:
        v.value = double(c.read<float>(what));
        return v;
    case F64:
        v.value = c.read<double>(what);
        return v;
    case Bool:
        v.value = c.read<std::uint8_t>(what) != 0;
        return v;
    case String:
        v.value = c.readString(what);
        return v;
    case ArrayKind: {
        const std::uint32_t element = c.read<std::uint32_t>(what);
        const std::uint64_t count = c.read<std::uint64_t>(what);
        // Every element takes at least its smallest encoding in the file (a string its 8-byte
        // length), so a count the rest of the file cannot hold is a lie: refused before anything
        // is reserved for it.
        const std::uint64_t smallest = element == U8 || element == I8 || element == Bool    ? 1
                                       : element == U16 || element == I16                   ? 2
                                       : element == U32 || element == I32 || element == F32 ? 4
                                                                                            : 8;
        if (count > kMaxArray || count > c.remaining() / smallest)
            throw std::runtime_error("array " + key + " claims " + std::to_string(count) +
                                     " elements, more than the file holds");
        if (element == String) {
            std::vector<std::string> items;
            items.reserve(count);
            for (std::uint64_t i = 0; i < count; ++i)
                items.push_back(c.readString(what));
            v.value = GgufValue::Array{std::move(items)};
        } else if (element == F32 || element == F64) {
            std::vector<double> items;
            items.reserve(count);
            for (std::uint64_t i = 0; i < count; ++i)
                items.push_back(element == F32 ? double(c.read<float>(what))
                                               : c.read<double>(what));
            v.value = GgufValue::Array{std::move(items)};
        } else if (element == Bool) {
            std::vector<bool> items;
            items.reserve(count);
            for (std::uint64_t i = 0; i < count; ++i)
                items.push_back(c.read<std::uint8_t>(what) != 0);
            v.value = GgufValue::Array{std::move(items)};
        } else if (element <= I32 || element == U64 || element == I64) {
            std::vector<std::int64_t> items;
            items.reserve(count);
            for (std::uint64_t i = 0; i < count; ++i)
                items.push_back(readSigned(c, element, what));
            v.value = GgufValue::Array{std::move(items)};
        } else {
            throw std::runtime_error("array " + key + " has elements of unknown kind " +
                                     std::to_string(element));
        }
        return v;
    }
    default:
        throw std::runtime_error("metadata " + key + " has unknown kind " + std::to_string(kind));
    }
}

} // namespace

std::optional<std::int64_t> GgufValue::integer() const {
    if (const auto* i = std::get_if<std::int64_t>(&value))
        return *i;
    if (const auto* u = std::get_if<std::uint64_t>(&value);
        u && *u <= std::uint64_t(std::numeric_limits<std::int64_t>::max()))
        return std::int64_t(*u);
    return std::nullopt;
}

std::optional<double> GgufValue::number() const {
    if (const auto* d = std::get_if<double>(&value))
        return *d;
    if (const auto* u = std::get_if<std::uint64_t>(&value))
        return double(*u);
    if (const auto i = integer())
        return double(*i);
    return std::nullopt;
}

const std::string* GgufValue::string() const {
    return std::get_if<std::string>(&value);
}

const std::vector<std::string>* GgufValue::strings() const {
    const auto* array = std::get_if<Array>(&value);
    return array ? std::get_if<std::vector<std::string>>(array) : nullptr;
}

const std::vector<std::int64_t>* GgufValue::integers() const {
    const auto* array = std::get_if<Array>(&value);
    return array ? std::get_if<std::vector<std::int64_t>>(array) : nullptr;
}

std::string ggmlTypeName(std::uint32_t type) {
    switch (static_cast<GgmlType>(type)) {
    case GgmlType::F32:
        return "F32";
    case GgmlType::F16:
        return "F16";
    case GgmlType::Q4_0:
        return "Q4_0";
    case GgmlType::Q4_1:
        return "Q4_1";
    case GgmlType::Q5_0:
        return "Q5_0";
    case GgmlType::Q5_1:
        return "Q5_1";
    case GgmlType::Q8_0:
        return "Q8_0";
    case GgmlType::Q8_1:
        return "Q8_1";
    case GgmlType::Q2_K:
        return "Q2_K";
    case GgmlType::Q3_K:
        return "Q3_K";
    case GgmlType::Q4_K:
        return "Q4_K";
    case GgmlType::Q5_K:
        return "Q5_K";
    case GgmlType::Q6_K:
        return "Q6_K";
    case GgmlType::Q8_K:
        return "Q8_K";
    case GgmlType::BF16:
        return "BF16";
    }
    return "type " + std::to_string(type);
}

std::uint64_t GgufTensorInfo::elements() const {
    std::uint64_t n = 1;
    for (std::uint64_t d : dims)
        n *= d;
    return n;
}

std::optional<std::uint64_t> ggmlTensorBytes(std::uint32_t type, std::uint64_t elements) {
    const auto block = ggmlBlock(type);
    if (!block || elements % block->elements != 0)
        return std::nullopt;
    return elements / block->elements * block->bytes;
}

GgufFile::~GgufFile() = default;

GgufFile::Opened GgufFile::open(const std::string& path) {
    Opened out;
    std::unique_ptr<GgufFile> file(new GgufFile);
    if (!file->mapped_.open(path, &out.error))
        return out;
    try {
        Cursor c(file->mapped_.data(), file->mapped_.size());
        if (file->mapped_.size() < 4 || std::memcmp(file->mapped_.data(), "GGUF", 4) != 0)
            throw std::runtime_error("not a GGUF file (no GGUF magic)");
        c.read<std::uint32_t>("the magic");
        file->version_ = c.read<std::uint32_t>("the version");
        if (file->version_ != 2 && file->version_ != 3)
            throw std::runtime_error("GGUF version " + std::to_string(file->version_) +
                                     " (2 and 3 are read)");
        const std::uint64_t tensorCount = c.read<std::uint64_t>("the tensor count");
        const std::uint64_t kvCount = c.read<std::uint64_t>("the metadata count");
        // Each entry takes at least 8 bytes, so counts beyond the file's size are lies.
        if (tensorCount > file->mapped_.size() / 8 || kvCount > file->mapped_.size() / 8)
            throw std::runtime_error("the header claims more entries than the file holds");
        for (std::uint64_t i = 0; i < kvCount; ++i) {
            std::string key = c.readString("a metadata key");
            const std::uint32_t kind = c.read<std::uint32_t>("a metadata kind");
            GgufValue value = readValue(c, kind, key);
            file->metadata_.insert_or_assign(std::move(key), std::move(value));
        }
        for (std::uint64_t i = 0; i < tensorCount; ++i) {
            GgufTensorInfo t;
            t.name = c.readString("a tensor name");
            const std::uint32_t rank = c.read<std::uint32_t>("a tensor's rank");
            if (rank == 0 || rank > 8)
                throw std::runtime_error("tensor " + t.name + " has rank " + std::to_string(rank));
            for (std::uint32_t d = 0; d < rank; ++d) {
                t.dims.push_back(c.read<std::uint64_t>("a tensor's shape"));
                if (t.dims.back() == 0 || t.dims.back() > file->mapped_.size() * 2)
                    throw std::runtime_error("tensor " + t.name + " has an impossible shape");
            }
            std::uint64_t elements = 1;
            for (std::uint64_t d : t.dims)
                if (__builtin_mul_overflow(elements, d, &elements) ||
                    elements > (std::uint64_t(1) << 48))
                    throw std::runtime_error("tensor " + t.name + " has an impossible shape");
            t.type = c.read<std::uint32_t>("a tensor's type");
            t.offset = c.read<std::uint64_t>("a tensor's offset");
            file->tensors_.push_back(std::move(t));
        }
        std::uint64_t alignment = 32;
        if (const auto a = file->integer("general.alignment"); a && *a > 0)
            alignment = std::uint64_t(*a);
        file->dataOffset_ = (c.at() + alignment - 1) / alignment * alignment;
        for (const GgufTensorInfo& t : file->tensors_) {
            const auto bytes = ggmlTensorBytes(t.type, t.elements());
            // Each term is at most the file's size, so the sum cannot overflow.
            if (bytes && (t.offset > file->mapped_.size() || *bytes > file->mapped_.size() ||
                          file->dataOffset_ + t.offset + *bytes > file->mapped_.size()))
                throw std::runtime_error("tensor " + t.name + " lies beyond the end of the file");
        }
    } catch (const std::exception& e) {
        out.error = path + ": " + e.what();
        return out;
    }
    out.file = std::move(file);
    return out;
}

const GgufValue* GgufFile::find(const std::string& key) const {
    const auto found = metadata_.find(key);
    return found == metadata_.end() ? nullptr : &found->second;
}

std::optional<std::int64_t> GgufFile::integer(const std::string& key) const {
    const GgufValue* v = find(key);
    return v ? v->integer() : std::nullopt;
}

std::optional<double> GgufFile::number(const std::string& key) const {
    const GgufValue* v = find(key);
    return v ? v->number() : std::nullopt;
}

std::string GgufFile::string(const std::string& key, const std::string& fallback) const {
    const GgufValue* v = find(key);
    return v && v->string() ? *v->string() : fallback;
}

const GgufTensorInfo* GgufFile::tensor(const std::string& name) const {
    for (const GgufTensorInfo& t : tensors_)
        if (t.name == name)
            return &t;
    return nullptr;
}

std::span<const std::uint8_t> GgufFile::bytes(const GgufTensorInfo& tensor) const {
    const auto size = ggmlTensorBytes(tensor.type, tensor.elements());
    if (!size || dataOffset_ + tensor.offset + *size > mapped_.size())
        return {};
    return {mapped_.data() + dataOffset_ + tensor.offset, std::size_t(*size)};
}

std::vector<float> GgufFile::dequantize(const GgufTensorInfo& tensor, std::string* error) const {
    const auto data = bytes(tensor);
    std::vector<float> out(data.empty() ? 0 : tensor.elements());
    if (data.empty() || !dequantizeBlocks(tensor.type, data, out)) {
        if (error)
            *error = "cannot read tensor " + tensor.name + " of type " + ggmlTypeName(tensor.type) +
                     (data.empty() ? " (its data is not in the file)" : " (no reader for it)");
        return {};
    }
    return out;
}

} // namespace kwb::model
