#include "save_trained_model.h"

#include "engine/model/huggingface_folder.h"
#include "engine/model/model_files.h"
#include "engine/torch/llama_model.h"

#include <cstring>

namespace kwb::modelworker {

bool saveTrainedModel(const torchnn::LlamaModel& model, const std::string& sourceModel,
                      const model::BpeTokenizer& tokenizer, const std::string& folder,
                      const std::string& producedBy, std::string* error) {
    std::vector<model::SafetensorsWrite> tensors;
    for (auto& [name, weight] : model.exportWeights()) {
        model::SafetensorsWrite w{name, "F32", {}, {}};
        for (std::int64_t d : weight.shape)
            w.shape.push_back(std::uint64_t(d));
        w.bytes.resize(weight.values.size() * sizeof(float));
        std::memcpy(w.bytes.data(), weight.values.data(), w.bytes.size());
        tensors.push_back(std::move(w));
    }
    const std::string chat = model::readChatTemplateText(sourceModel, error);
    return model::writeHuggingFaceFolder(folder, model.config(), std::move(tensors), tokenizer,
                                         chat, producedBy, error);
}

} // namespace kwb::modelworker
