// A safetensors weight file as `kwb model` and the model loader read it: the header, every
// tensor's bounds, and the float conversion of the tensors that claim a float dtype.
#include "engine/model/safetensors_file.h"
#include "tests/fuzz/fuzz_input.h"

#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file =
        kwb::fuzz::asScratchFile("safetensors", ".safetensors", data, size);
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
