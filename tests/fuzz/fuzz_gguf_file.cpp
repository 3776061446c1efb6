// A GGUF model file as `kwb model` reads it: the header, metadata and tensor table, every
// tensor's dequantization, and the tokenizer built from its metadata.
#include "engine/model/bpe_tokenizer.h"
#include "engine/model/gguf_file.h"
#include "tests/fuzz/fuzz_input.h"

#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file = kwb::fuzz::asScratchFile("gguf", ".gguf", data, size);
    const auto opened = kwb::model::GgufFile::open(file.string());
    if (!opened)
        return 0;
    for (const auto& tensor : opened.file->tensors())
        if (tensor.elements() <= (1u << 20)) {
            std::string error;
            (void)opened.file->dequantize(tensor, &error);
        }
    const auto tokenizer = kwb::model::BpeTokenizer::fromGguf(*opened.file);
    if (tokenizer) {
        const auto ids = tokenizer.tokenizer->encode("<|im_start|>the cat 123 héllo\n");
        (void)tokenizer.tokenizer->decode(ids);
    }
    return 0;
}
