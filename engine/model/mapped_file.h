#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace kwb::model {

// A regular file mapped read-only and private, unmapped when this object goes: model weights
// are read where they lie instead of being copied into memory.
class MappedFile {
public:
    MappedFile() = default;
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    // False with `error` ("cannot open ...", "... is not a regular file") when it cannot be mapped.
    bool open(const std::string& path, std::string* error);
    std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
    const std::uint8_t* data() const { return data_; }
    std::size_t size() const { return size_; }

private:
    void release();

    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace kwb::model
