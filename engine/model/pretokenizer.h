#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::model {

// Splits text into the pieces a byte-level BPE encodes one at a time, as the model's own
// tokenizer does: a sequence of regular-expression splits (PCRE2 with Unicode properties, so
// the patterns are the tokenizers' own), each keeping both the matches and the text between
// them. The pieces, joined, are the text again.
class Pretokenizer {
public:
    // By GGUF's tokenizer.ggml.pre name ("gpt2", "smollm", "llama-bpe", "qwen2", ...).
    static std::optional<Pretokenizer> forGgufName(const std::string& name, std::string* error);
    // From a tokenizer.json "pre_tokenizer" object (ByteLevel, Split, Digits, Sequence).
    static std::optional<Pretokenizer> fromTokenizerJson(const nlohmann::json& config,
                                                         std::string* error);

    std::vector<std::string> split(std::string_view text) const;
    std::size_t steps() const { return steps_.size(); }
    // The same splits as a tokenizer.json "pre_tokenizer" object (with a ByteLevel step, which
    // byte-level BPE tokenizers carry), for writing a tokenizer.json that transformers reads.
    const nlohmann::json& tokenizerJson() const { return config_; }

private:
    struct Compiled;
    bool add(const std::string& pattern, std::string* error);

    std::vector<std::shared_ptr<const Compiled>> steps_;
    nlohmann::json config_;
};

// GPT-2's split pattern, which ByteLevel pre-tokenizers with use_regex apply.
extern const char* const kGpt2SplitPattern;

} // namespace kwb::model
