// A safetensors weight file as `kwb model` and the model loader read it: the header, every
// tensor's bounds, and the float conversion of the tensors that claim a float dtype.
#include "engine/model/safetensors_file.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path file =
        std::filesystem::temp_directory_path() /
        ("kwb-fuzz-safetensors-" + std::to_string(getpid()) + ".safetensors");
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    const auto opened = kwb::model::SafetensorsFile::open(file.string());
    if (!opened)
        return 0;
    for (const auto& tensor : opened.file->tensors())
        if (tensor.elements() <= (1u << 20)) {
            std::string error;
            (void)opened.file->toFloat(tensor, &error);
        }
    return 0;
}
