#pragma once

#include "engine/model/token_constraint.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::model {

class BpeTokenizer;

// A finite language written as text with choice groups: "block={128|256|512} vec={1|4}" holds
// the six strings "block=128 vec=1" ... "block=512 vec=4". It is what a structured action may
// say (the tuning environment's knob settings), and what constrained decoding lets the policy
// write. `\{`, `\|`, `\}` and `\\` stand for the characters themselves.
class ChoiceGrammar {
public:
    // nullopt (and `error` set) for an unclosed or nested group, an empty group or a stray `}`.
    static std::optional<ChoiceGrammar> parse(std::string_view text, std::string* error);
    // One segment per choice group, literal text in between as a segment of one choice.
    const std::vector<std::vector<std::string>>& segments() const { return segments_; }
    bool matches(std::string_view text) const;
    double languageSize() const; // how many strings it holds (a double: products grow fast)

private:
    std::vector<std::vector<std::string>> segments_;
};

// Where a generation stands in a ChoiceGrammar, advanced token by token: which tokens may come
// next (those whose bytes keep the text a prefix of some string of the language, and the end
// token once the text is a whole string), built from each token's decoded bytes. Tokens with no
// bytes (special tokens) are never allowed, except `endToken`. The grammar and the byte table
// must outlive the matcher (one table serves every matcher of a model).
class GrammarMatcher : public TokenConstraint {
public:
    GrammarMatcher(const ChoiceGrammar& grammar, const std::vector<std::string>& tokenBytes,
                   std::int32_t endToken);

    // 1 at each token id that may come next.
    std::vector<std::uint8_t> allowedTokens() const override;
    // False when the token is not allowed (the state is then unchanged).
    bool accept(std::int32_t token) override;
    bool complete() const;    // the text so far is a string of the language
    bool finished() const;    // the end token was accepted
    bool canContinue() const; // some longer string of the language starts with the text

private:
    // A place in the grammar: choice `choice` of segment `segment`, `offset` bytes into it.
    // segment == segments().size() is the end of the language.
    struct Position {
        std::uint32_t segment = 0, choice = 0, offset = 0;
        bool operator==(const Position&) const = default;
    };
    void addClosed(std::vector<Position>& into, Position p) const;
    std::vector<Position> advance(const std::vector<Position>& from, std::string_view bytes) const;

    const ChoiceGrammar& grammar_;
    const std::vector<std::string>& tokenBytes_;
    std::int32_t endToken_;
    std::vector<Position> positions_;
    bool finished_ = false;
};

// Each token's bytes as decode() gives them, empty for special tokens: GrammarMatcher's table.
std::vector<std::string> tokenByteTable(const BpeTokenizer& tokenizer);

} // namespace kwb::model
