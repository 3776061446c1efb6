#pragma once

#include "engine/model/pretokenizer.h"

#include <bitset>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kwb::model {

class GgufFile;

using TokenId = std::int32_t;

struct SpecialToken {
    std::string text;
    TokenId id = 0;
};

// A byte-level BPE tokenizer (GPT-2, Llama 3, Qwen2, SmolLM families), read from a GGUF file's
// tokenizer.ggml.* metadata or from a Hugging Face tokenizer.json. encode() splits out special
// tokens (<|im_start|>, ...) first, pre-tokenizes the text between them with the model's own
// patterns, maps bytes to the byte-level alphabet and applies the merges by rank; decode() is
// the inverse. Immutable once loaded, so one tokenizer serves every thread.
class BpeTokenizer {
public:
    struct Loaded;
    static Loaded fromGguf(const GgufFile& file);
    static Loaded fromTokenizerJson(const std::string& path);

    std::vector<TokenId> encode(std::string_view text, bool parseSpecial = true) const;
    std::string decode(const std::vector<TokenId>& ids, bool skipSpecial = false) const;

    std::size_t vocabularySize() const { return vocab_.size(); }
    std::size_t mergeCount() const { return ranks_.size(); }
    const std::string& tokenText(TokenId id) const; // the vocabulary's spelling
    std::optional<TokenId> tokenId(std::string_view text) const;
    const std::vector<SpecialToken>& specialTokens() const { return special_; }
    bool isSpecial(TokenId id) const;

    // A tokenizer.json that Hugging Face's tokenizers library reads as this same tokenizer.
    nlohmann::json toTokenizerJson() const;

    std::optional<TokenId> bos() const { return bos_; }
    std::optional<TokenId> eos() const { return eos_; }

private:
    BpeTokenizer() = default;
    bool setSpecialTokens(std::vector<SpecialToken> tokens, std::string* error);
    bool setMerges(const std::vector<std::string>& merges, std::string* error);
    void encodePiece(const std::string& piece, std::vector<TokenId>& out) const;

    std::vector<std::string> vocab_;
    std::unordered_map<std::string, TokenId> ids_;
    // "left right" -> rank (lower merges first), and the merges in rank order.
    std::unordered_map<std::string, int> ranks_;
    std::vector<std::string> merges_;
    Pretokenizer pretokenizer_;
    std::vector<SpecialToken> special_; // longest first, so the longest match wins
    std::bitset<256> specialStarts_;    // the first bytes of special tokens, a quick filter
    std::vector<bool> specialById_;
    // Llama 3's tokenizer takes a piece that is itself in the vocabulary as one token.
    bool ignoreMerges_ = false;
    std::optional<TokenId> bos_;
    std::optional<TokenId> eos_;
    std::optional<TokenId> unknown_;
};

struct BpeTokenizer::Loaded {
    std::unique_ptr<BpeTokenizer> tokenizer;
    std::string error;
    explicit operator bool() const { return tokenizer != nullptr; }
};

} // namespace kwb::model
