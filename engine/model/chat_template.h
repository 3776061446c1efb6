#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kwb::model {

struct ChatTurn {
    std::string role; // "system", "user", "assistant", "tool"
    std::string content;
};

// The chat formats of the model families the workbench runs, rendered natively rather than by
// a Jinja engine: the template text (GGUF's tokenizer.chat_template, or tokenizer_config.json's)
// only tells which family it is and, for ChatML templates that insert one, the default system
// prompt. `render` gives the text a model of that family was trained on; tokenized with special
// tokens recognised, it is what transformers' apply_chat_template produces.
class ChatTemplate {
public:
    enum class Family { ChatMl, Llama3 };

    // nullopt with `error` for a template of another family.
    static std::optional<ChatTemplate> fromTemplateText(const std::string& text,
                                                        std::string* error);
    static ChatTemplate chatMl(std::string defaultSystem = {});

    Family family() const { return family_; }
    const std::string& defaultSystemPrompt() const { return defaultSystem_; }
    // `generationPrompt`: end with the opening of an assistant turn, for the model to continue.
    std::string render(const std::vector<ChatTurn>& turns, bool generationPrompt) const;
    // The text that ends a turn (generation stops there): "<|im_end|>" or "<|eot_id|>".
    std::string endOfTurn() const;

private:
    Family family_ = Family::ChatMl;
    std::string defaultSystem_;
};

} // namespace kwb::model
