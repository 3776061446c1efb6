#include "engine/model/choice_grammar.h"

#include "engine/model/bpe_tokenizer.h"

#include <algorithm>

namespace kwb::model {

std::optional<ChoiceGrammar> ChoiceGrammar::parse(std::string_view text, std::string* error) {
    ChoiceGrammar grammar;
    std::string literal;
    std::vector<std::string> group;
    bool inGroup = false;
    const auto fail = [&](const std::string& why) -> std::optional<ChoiceGrammar> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '\\') {
            if (i + 1 == text.size())
                return fail("a backslash ends the grammar");
            literal += text[++i];
            continue;
        }
        if (c == '{') {
            if (inGroup)
                return fail("a choice group opens inside another at byte " + std::to_string(i));
            if (!literal.empty())
                grammar.segments_.push_back({literal});
            literal.clear();
            inGroup = true;
        } else if (c == '|' && inGroup) {
            group.push_back(literal);
            literal.clear();
        } else if (c == '}') {
            if (!inGroup)
                return fail("a '}' closes no group at byte " + std::to_string(i));
            group.push_back(literal);
            literal.clear();
            if (std::all_of(group.begin(), group.end(), [](auto& s) { return s.empty(); }))
                return fail("an empty choice group at byte " + std::to_string(i));
            // A choice written twice is one string of the language.
            std::vector<std::string> unique;
            for (auto& choice : group)
                if (std::find(unique.begin(), unique.end(), choice) == unique.end())
                    unique.push_back(std::move(choice));
            grammar.segments_.push_back(std::move(unique));
            group.clear();
            inGroup = false;
        } else {
            literal += c;
        }
    }
    if (inGroup)
        return fail("a choice group is not closed");
    if (!literal.empty())
        grammar.segments_.push_back({literal});
    if (grammar.segments_.empty())
        return fail("the grammar is empty");
    return grammar;
}

bool ChoiceGrammar::matches(std::string_view text) const {
    // Depth-first over the segments; the languages are small and choices rarely share prefixes.
    std::vector<std::pair<std::size_t, std::size_t>> stack{{0, 0}}; // (segment, offset in text)
    while (!stack.empty()) {
        const auto [segment, offset] = stack.back();
        stack.pop_back();
        if (segment == segments_.size()) {
            if (offset == text.size())
                return true;
            continue;
        }
        for (const std::string& choice : segments_[segment])
            if (text.substr(offset, choice.size()) == choice)
                stack.emplace_back(segment + 1, offset + choice.size());
    }
    return false;
}

double ChoiceGrammar::languageSize() const {
    double size = 1;
    for (const auto& segment : segments_)
        size *= double(segment.size());
    return size;
}

GrammarMatcher::GrammarMatcher(const ChoiceGrammar& grammar,
                               const std::vector<std::string>& tokenBytes, std::int32_t endToken)
    : grammar_(grammar), tokenBytes_(tokenBytes), endToken_(endToken) {
    for (std::uint32_t c = 0; c < grammar.segments().front().size(); ++c)
        addClosed(positions_, {0, c, 0});
}

// Adds `p`, first moving past a choice it has finished into every choice of the next segment
// (an empty choice is finished at once).
void GrammarMatcher::addClosed(std::vector<Position>& into, Position p) const {
    const auto& segments = grammar_.segments();
    const auto end = std::uint32_t(segments.size());
    if (p.segment < end && p.offset == segments[p.segment][p.choice].size()) {
        const std::uint32_t next = p.segment + 1;
        if (next == end) {
            addClosed(into, {end, 0, 0});
            return;
        }
        for (std::uint32_t c = 0; c < segments[next].size(); ++c)
            addClosed(into, {next, c, 0});
        return;
    }
    if (std::find(into.begin(), into.end(), p) == into.end())
        into.push_back(p);
}

std::vector<GrammarMatcher::Position> GrammarMatcher::advance(const std::vector<Position>& from,
                                                              std::string_view bytes) const {
    const auto& segments = grammar_.segments();
    std::vector<Position> current = from;
    for (char byte : bytes) {
        std::vector<Position> next;
        for (const Position& p : current) {
            if (p.segment == segments.size())
                continue;
            const std::string& choice = segments[p.segment][p.choice];
            if (choice[p.offset] == byte)
                addClosed(next, {p.segment, p.choice, p.offset + 1});
        }
        if (next.empty())
            return {};
        current = std::move(next);
    }
    return current;
}

std::vector<std::uint8_t> GrammarMatcher::allowedTokens() const {
    std::vector<std::uint8_t> allowed(tokenBytes_.size(), 0);
    if (finished_)
        return allowed;
    // The bytes each position may take next, to skip most of the vocabulary at its first byte.
    bool firstBytes[256] = {};
    const auto& segments = grammar_.segments();
    for (const Position& p : positions_)
        if (p.segment < segments.size())
            firstBytes[static_cast<unsigned char>(segments[p.segment][p.choice][p.offset])] = true;
    for (std::size_t id = 0; id < tokenBytes_.size(); ++id) {
        const std::string& bytes = tokenBytes_[id];
        if (bytes.empty() || !firstBytes[static_cast<unsigned char>(bytes[0])])
            continue;
        if (!advance(positions_, bytes).empty())
            allowed[id] = 1;
    }
    if (complete() && endToken_ >= 0 && std::size_t(endToken_) < allowed.size())
        allowed[std::size_t(endToken_)] = 1;
    return allowed;
}

bool GrammarMatcher::accept(std::int32_t token) {
    if (finished_ || token < 0 || std::size_t(token) >= tokenBytes_.size())
        return false;
    if (token == endToken_) {
        if (!complete())
            return false;
        finished_ = true;
        return true;
    }
    const std::string& bytes = tokenBytes_[std::size_t(token)];
    if (bytes.empty())
        return false;
    std::vector<Position> next = advance(positions_, bytes);
    if (next.empty())
        return false;
    positions_ = std::move(next);
    return true;
}

bool GrammarMatcher::complete() const {
    const auto end = std::uint32_t(grammar_.segments().size());
    return std::any_of(positions_.begin(), positions_.end(),
                       [&](const Position& p) { return p.segment == end; });
}

bool GrammarMatcher::finished() const {
    return finished_;
}

bool GrammarMatcher::canContinue() const {
    const auto end = std::uint32_t(grammar_.segments().size());
    return !finished_ && std::any_of(positions_.begin(), positions_.end(),
                                     [&](const Position& p) { return p.segment != end; });
}

std::vector<std::string> tokenByteTable(const BpeTokenizer& tokenizer) {
    std::vector<std::string> table(tokenizer.vocabularySize());
    for (std::size_t id = 0; id < table.size(); ++id)
        if (!tokenizer.isSpecial(TokenId(id)))
            table[id] = tokenizer.decode({TokenId(id)});
    return table;
}

} // namespace kwb::model
