#pragma once

// Shared by the fuzz targets: the libFuzzer entry point, a way to split one input into a
// few values, and the input as a file for readers that open paths.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace kwb::fuzz {

inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Writes the input to this process's scratch file "kwb-fuzz-<stem>-<pid><extension>" in the
// temporary folder (one per process: parallel fuzzing jobs do not share it) and returns its path.
inline std::filesystem::path asScratchFile(const std::string& stem, const std::string& extension,
                                           const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() /
        ("kwb-fuzz-" + stem + "-" + std::to_string(getpid()) + extension);
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return file;
}

} // namespace kwb::fuzz
