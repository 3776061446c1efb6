#include "engine/model/chat_template.h"

namespace kwb::model {

namespace {

// The string literal a ChatML template writes after "<|im_start|>system\n" when the
// conversation brings no system turn (SmolLM2's and Qwen2's templates do), if any.
std::string defaultSystemIn(const std::string& text) {
    const std::string marker = "<|im_start|>system\n";
    std::size_t at = text.find(marker);
    while (at != std::string::npos) {
        std::size_t begin = at + marker.size();
        // In the template source the literal may continue on the line or after a "\n" escape.
        std::size_t end = text.find("<|im_end|>", begin);
        if (end != std::string::npos) {
            std::string literal = text.substr(begin, end - begin);
            // A literal, not an expression such as "{{ message['content'] }}".
            if (literal.find("{{") == std::string::npos &&
                literal.find('\'') == std::string::npos && literal.find('+') == std::string::npos &&
                !literal.empty())
                return literal;
        }
        at = text.find(marker, begin);
    }
    return {};
}

} // namespace

std::optional<ChatTemplate> ChatTemplate::fromTemplateText(const std::string& text,
                                                           std::string* error) {
    ChatTemplate t;
    if (text.find("<|im_start|>") != std::string::npos) {
        t.family_ = Family::ChatMl;
        t.defaultSystem_ = defaultSystemIn(text);
        return t;
    }
    if (text.find("<|start_header_id|>") != std::string::npos) {
        t.family_ = Family::Llama3;
        return t;
    }
    if (error)
        *error = text.empty() ? "the model has no chat template"
                              : "the chat template is neither ChatML nor Llama 3's";
    return std::nullopt;
}

ChatTemplate ChatTemplate::chatMl(std::string defaultSystem) {
    ChatTemplate t;
    t.family_ = Family::ChatMl;
    t.defaultSystem_ = std::move(defaultSystem);
    return t;
}

std::string ChatTemplate::endOfTurn() const {
    return family_ == Family::ChatMl ? "<|im_end|>" : "<|eot_id|>";
}

std::string ChatTemplate::render(const std::vector<ChatTurn>& turns, bool generationPrompt) const {
    std::string out;
    if (family_ == Family::ChatMl) {
        // An empty conversation gets the default system turn too, although the template's
        // loop renders nothing for it (and transformers refuses it): so the rendering of any
        // first turns is a prefix of the whole conversation's, which training's token masks
        // rely on (training_conversation renders a reply's header before the reply).
        if (!defaultSystem_.empty() && (turns.empty() || turns.front().role != "system"))
            out += "<|im_start|>system\n" + defaultSystem_ + "<|im_end|>\n";
        for (const ChatTurn& t : turns)
            out += "<|im_start|>" + t.role + "\n" + t.content + "<|im_end|>\n";
        if (generationPrompt)
            out += "<|im_start|>assistant\n";
        return out;
    }
    // Llama 3: a header per turn, the content trimmed, each turn closed by <|eot_id|>.
    const auto trim = [](const std::string& s) {
        const auto first = s.find_first_not_of(" \t\n\r");
        const auto last = s.find_last_not_of(" \t\n\r");
        return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
    };
    out += "<|begin_of_text|>";
    for (const ChatTurn& t : turns)
        out += "<|start_header_id|>" + (t.role == "tool" ? std::string("ipython") : t.role) +
               "<|end_header_id|>\n\n" + trim(t.content) + "<|eot_id|>";
    if (generationPrompt)
        out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
}

} // namespace kwb::model
