#include "engine/model/gguf_to_huggingface.h"

#include "engine/model/bpe_tokenizer.h"
#include "engine/model/gguf_file.h"
#include "engine/model/huggingface_folder.h"
#include "engine/model/llama_weights.h"
#include "engine/model/safetensors_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace kwb::model {

namespace fs = std::filesystem;

bool convertGgufToHuggingFace(const std::string& ggufPath, const std::string& folder,
                              std::string* error) {
    const auto opened = GgufFile::open(ggufPath);
    if (!opened) {
        *error = opened.error;
        return false;
    }
    const GgufFile& f = *opened.file;
    const auto tokenizer = BpeTokenizer::fromGguf(f);
    if (!tokenizer) {
        *error = tokenizer.error;
        return false;
    }
    // The weights as the model code reads them: dequantized, named and ordered as Hugging Face's.
    LlamaWeights weights = readLlamaWeights(ggufPath);
    if (!weights.error.empty()) {
        *error = weights.error;
        return false;
    }
    std::vector<SafetensorsWrite> tensors;
    for (auto& [name, w] : weights.tensors) {
        SafetensorsWrite out{name, "F32", {}, {}};
        for (std::int64_t d : w.shape)
            out.shape.push_back(std::uint64_t(d));
        out.bytes.resize(w.values.size() * sizeof(float));
        std::memcpy(out.bytes.data(), w.values.data(), out.bytes.size());
        std::vector<float>().swap(w.values); // one copy of each weight at a time
        tensors.push_back(std::move(out));
    }
    return writeHuggingFaceFolder(folder, weights.config, std::move(tensors), *tokenizer.tokenizer,
                                  f.string("tokenizer.chat_template"), "kwb model convert", error);
}

} // namespace kwb::model
