#include "engine/model/bpe_tokenizer.h"

#include "engine/model/byte_level.h"
#include "engine/model/gguf_file.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <queue>
#include <sstream>

namespace kwb::model {

namespace {

// GGUF's token types (llama.cpp's llama_token_type): control and user-defined tokens are the
// ones written literally in text, like <|im_start|>.
constexpr std::int64_t kControl = 3;
constexpr std::int64_t kUserDefined = 4;

std::size_t utf8Length(unsigned char lead) {
    if (lead < 0x80)
        return 1;
    if ((lead & 0xE0) == 0xC0)
        return 2;
    if ((lead & 0xF0) == 0xE0)
        return 3;
    return 4;
}

} // namespace

bool BpeTokenizer::setSpecialTokens(std::vector<SpecialToken> tokens, std::string* error) {
    specialById_.assign(vocab_.size(), false);
    for (const SpecialToken& t : tokens) {
        if (t.id < 0 || std::size_t(t.id) >= vocab_.size()) {
            *error = "special token " + t.text + " has id " + std::to_string(t.id) +
                     " outside the vocabulary";
            return false;
        }
        specialById_[std::size_t(t.id)] = true;
    }
    std::erase_if(tokens, [](const SpecialToken& t) { return t.text.empty(); });
    std::stable_sort(tokens.begin(), tokens.end(),
                     [](const auto& a, const auto& b) { return a.text.size() > b.text.size(); });
    special_ = std::move(tokens);
    specialStarts_.reset();
    for (const SpecialToken& t : special_)
        specialStarts_.set(static_cast<unsigned char>(t.text[0]));
    return true;
}

bool BpeTokenizer::setMerges(const std::vector<std::string>& merges, std::string* error) {
    int rank = 0;
    for (const std::string& merge : merges) {
        // Both halves and their join must be tokens, or a merge would produce a piece the
        // vocabulary cannot name and its text would be lost.
        const std::size_t space = merge.find(' ');
        if (space == std::string::npos) {
            *error = "the merge '" + merge + "' is not two tokens separated by a space";
            return false;
        }
        const std::string left = merge.substr(0, space);
        const std::string right = merge.substr(space + 1);
        for (const std::string& token : {left, right, left + right})
            if (!ids_.count(token)) {
                *error = "the merge '" + merge + "' names '" + token +
                         "', which is not in the vocabulary";
                return false;
            }
        if (ranks_.emplace(merge, rank).second) {
            merges_.push_back(merge);
            ++rank;
        }
    }
    return true;
}

BpeTokenizer::Loaded BpeTokenizer::fromGguf(const GgufFile& file) {
    Loaded out;
    const std::string model = file.string("tokenizer.ggml.model");
    if (model != "gpt2") {
        out.error = "the tokenizer is '" + model + "'; byte-level BPE ('gpt2') is read";
        return out;
    }
    const GgufValue* tokens = file.find("tokenizer.ggml.tokens");
    const GgufValue* merges = file.find("tokenizer.ggml.merges");
    if (!tokens || !tokens->strings() || !merges || !merges->strings()) {
        out.error = "the file has no tokenizer.ggml.tokens or tokenizer.ggml.merges";
        return out;
    }
    std::unique_ptr<BpeTokenizer> t(new BpeTokenizer);
    t->vocab_ = *tokens->strings();
    if (t->vocab_.size() > std::size_t(std::numeric_limits<TokenId>::max())) {
        out.error = "the vocabulary is too large";
        return out;
    }
    for (std::size_t i = 0; i < t->vocab_.size(); ++i)
        t->ids_.emplace(t->vocab_[i], TokenId(i));
    if (!t->setMerges(*merges->strings(), &out.error))
        return out;
    const std::string pre = file.string("tokenizer.ggml.pre", "default");
    std::string error;
    auto pretokenizer = Pretokenizer::forGgufName(pre, &error);
    if (!pretokenizer) {
        out.error = error;
        return out;
    }
    t->pretokenizer_ = std::move(*pretokenizer);
    t->ignoreMerges_ = pre == "llama-bpe" || pre == "llama3";
    std::vector<SpecialToken> special;
    if (const GgufValue* types = file.find("tokenizer.ggml.token_type");
        types && types->integers()) {
        const auto& kinds = *types->integers();
        for (std::size_t i = 0; i < kinds.size() && i < t->vocab_.size(); ++i)
            if (kinds[i] == kControl || kinds[i] == kUserDefined)
                special.push_back({t->vocab_[i], TokenId(i)});
    }
    const auto id = [&](const char* key) -> std::optional<TokenId> {
        const auto v = file.integer(key);
        if (v && *v >= 0 && std::size_t(*v) < t->vocab_.size())
            return TokenId(*v);
        return std::nullopt;
    };
    t->bos_ = id("tokenizer.ggml.bos_token_id");
    t->eos_ = id("tokenizer.ggml.eos_token_id");
    t->unknown_ = id("tokenizer.ggml.unknown_token_id");
    if (!t->setSpecialTokens(std::move(special), &out.error))
        return out;
    out.tokenizer = std::move(t);
    return out;
}

BpeTokenizer::Loaded BpeTokenizer::fromTokenizerJson(const std::string& path) {
    Loaded out;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        out.error = "cannot read " + path;
        return out;
    }
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        out.error = path + " is not JSON";
        return out;
    }
    const nlohmann::json model = doc.value("model", nlohmann::json::object());
    if (!model.is_object() || model.value("type", "") != "BPE" || !model.contains("vocab") ||
        !model["vocab"].is_object() || !model.contains("merges") || !model["merges"].is_array()) {
        out.error = path + " holds no BPE model (model.type, vocab, merges)";
        return out;
    }
    if (model.value("byte_fallback", false)) {
        out.error = path + ": byte-fallback BPE (SentencePiece style) is not supported";
        return out;
    }
    std::unique_ptr<BpeTokenizer> t(new BpeTokenizer);
    // Ids are indices into the vocabulary: each must be a whole number in range, or the file
    // is refused as the tokenizers library refuses it (a negative one once wrote out of bounds).
    constexpr std::int64_t kLargestId = 10'000'000;
    const auto validId = [](const nlohmann::json& id) {
        return id.is_number_integer() && id.get<std::int64_t>() >= 0 &&
               id.get<std::int64_t>() < kLargestId;
    };
    std::size_t size = 0;
    for (const auto& [text, id] : model["vocab"].items()) {
        if (!validId(id)) {
            out.error = path + ": the vocabulary gives '" + text + "' the id " + id.dump() +
                        " (ids are whole numbers from 0 to " + std::to_string(kLargestId - 1) + ")";
            return out;
        }
        size = std::max(size, std::size_t(id.get<std::int64_t>()) + 1);
    }
    std::vector<SpecialToken> special;
    const nlohmann::json added = doc.value("added_tokens", nlohmann::json::array());
    if (!added.is_array()) {
        out.error = path + ": added_tokens is not a list";
        return out;
    }
    for (const nlohmann::json& a : added) {
        if (!a.is_object() || !a.contains("content") || !a["content"].is_string() ||
            !a.contains("id") || !validId(a["id"])) {
            out.error = path + ": an added token without a string content and a valid id: " +
                        a.dump().substr(0, 200);
            return out;
        }
        size = std::max(size, std::size_t(a["id"].get<std::int64_t>()) + 1);
    }
    t->vocab_.assign(size, std::string());
    for (const auto& [text, id] : model["vocab"].items())
        t->vocab_[std::size_t(id.get<std::int64_t>())] = text;
    for (const nlohmann::json& a : added) {
        const auto id = TokenId(a["id"].get<std::int64_t>());
        t->vocab_[std::size_t(id)] = a["content"].get<std::string>();
        special.push_back({a["content"].get<std::string>(), id});
    }
    for (std::size_t i = 0; i < t->vocab_.size(); ++i)
        if (!t->vocab_[i].empty())
            t->ids_.emplace(t->vocab_[i], TokenId(i));
    std::vector<std::string> merges;
    for (const nlohmann::json& merge : model["merges"]) {
        // Older files write "left right", newer ones ["left", "right"].
        if (merge.is_string() && merge.get<std::string>().find(' ') != std::string::npos)
            merges.push_back(merge.get<std::string>());
        else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
                 merge[1].is_string())
            merges.push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
        else {
            out.error = path + ": the merge " + merge.dump().substr(0, 200) +
                        " is neither \"left right\" nor [\"left\", \"right\"]";
            return out;
        }
    }
    if (!t->setMerges(merges, &out.error)) {
        out.error = path + ": " + out.error;
        return out;
    }
    if (const nlohmann::json unk = model.value("unk_token", nlohmann::json()); unk.is_string()) {
        // Characters the vocabulary cannot spell become this token, as in `tokenizers`.
        t->unknown_ = t->tokenId(unk.get<std::string>());
        if (!t->unknown_) {
            out.error = path + ": the unknown token '" + unk.get<std::string>() +
                        "' is not in the vocabulary";
            return out;
        }
    }
    t->ignoreMerges_ = model.value("ignore_merges", false);
    std::string error;
    const nlohmann::json pre = doc.value("pre_tokenizer", nlohmann::json());
    auto pretokenizer = pre.is_null() ? Pretokenizer::forGgufName("gpt2", &error)
                                      : Pretokenizer::fromTokenizerJson(pre, &error);
    if (!pretokenizer) {
        out.error = path + ": " + error;
        return out;
    }
    t->pretokenizer_ = std::move(*pretokenizer);
    if (!t->setSpecialTokens(std::move(special), &out.error))
        return out;
    out.tokenizer = std::move(t);
    return out;
}

void BpeTokenizer::encodePiece(const std::string& piece, std::vector<TokenId>& out) const {
    const std::string symbols = bytesToSymbols(piece);
    if (ignoreMerges_) {
        if (const auto whole = ids_.find(symbols); whole != ids_.end()) {
            out.push_back(whole->second);
            return;
        }
    }
    // The piece's characters as a list of symbols, each a span of `symbols`; merging a pair
    // grows the left span and ends the right one. A queue ordered by (rank, position) yields
    // the adjacent pair of lowest rank, leftmost first, as the reference implementations merge;
    // an entry whose spans changed since it was queued is stale and skipped. This keeps a long
    // piece (a run of one letter, digits, spaces) at n log n instead of a rescan per merge.
    struct Symbol {
        std::size_t start = 0;
        std::size_t length = 0; // 0: merged into its left neighbour
        std::ptrdiff_t prev = -1;
        std::ptrdiff_t next = -1;
    };
    std::vector<Symbol> parts;
    for (std::size_t i = 0; i < symbols.size();) {
        const std::size_t n =
            std::min(utf8Length(static_cast<unsigned char>(symbols[i])), symbols.size() - i);
        const auto index = std::ptrdiff_t(parts.size());
        parts.push_back({i, n, index - 1, -1});
        if (index > 0)
            parts[std::size_t(index - 1)].next = index;
        i += n;
    }
    struct Candidate {
        int rank;
        std::size_t left;
        std::size_t leftLength;
        std::size_t rightLength;
        bool operator>(const Candidate& o) const {
            return rank != o.rank ? rank > o.rank : left > o.left;
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    std::string key;
    const auto consider = [&](std::ptrdiff_t left) {
        if (left < 0 || parts[std::size_t(left)].next < 0)
            return;
        const Symbol& l = parts[std::size_t(left)];
        const Symbol& r = parts[std::size_t(l.next)];
        key.assign(symbols, l.start, l.length);
        key += ' ';
        key.append(symbols, r.start, r.length);
        if (const auto found = ranks_.find(key); found != ranks_.end())
            queue.push({found->second, std::size_t(left), l.length, r.length});
    };
    for (std::size_t i = 0; i + 1 < parts.size(); ++i)
        consider(std::ptrdiff_t(i));
    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& l = parts[c.left];
        if (l.length != c.leftLength || l.next < 0 ||
            parts[std::size_t(l.next)].length != c.rightLength)
            continue; // a span of this pair changed since it was queued
        Symbol& r = parts[std::size_t(l.next)];
        l.length += r.length;
        r.length = 0;
        l.next = r.next;
        if (l.next >= 0)
            parts[std::size_t(l.next)].prev = std::ptrdiff_t(c.left);
        consider(l.prev);
        consider(std::ptrdiff_t(c.left));
    }
    for (std::ptrdiff_t i = parts.empty() ? -1 : 0; i >= 0; i = parts[std::size_t(i)].next) {
        const Symbol& part = parts[std::size_t(i)];
        if (const auto found = ids_.find(symbols.substr(part.start, part.length));
            found != ids_.end())
            out.push_back(found->second);
        else if (unknown_)
            out.push_back(*unknown_);
    }
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text, bool parseSpecial) const {
    std::vector<TokenId> out;
    std::size_t start = 0;
    const auto encodeSpan = [&](std::string_view span) {
        for (const std::string& piece : pretokenizer_.split(span))
            encodePiece(piece, out);
    };
    if (parseSpecial && !special_.empty()) {
        for (std::size_t i = 0; i < text.size();) {
            const SpecialToken* hit = nullptr;
            if (specialStarts_.test(static_cast<unsigned char>(text[i])))
                for (const SpecialToken& s : special_)
                    if (text.compare(i, s.text.size(), s.text) == 0) {
                        hit = &s;
                        break;
                    }
            if (!hit) {
                ++i;
                continue;
            }
            if (i > start)
                encodeSpan(text.substr(start, i - start));
            out.push_back(hit->id);
            i += hit->text.size();
            start = i;
        }
    }
    if (start < text.size())
        encodeSpan(text.substr(start));
    return out;
}

std::string BpeTokenizer::decode(const std::vector<TokenId>& ids, bool skipSpecial) const {
    std::string out;
    for (TokenId id : ids) {
        if (id < 0 || std::size_t(id) >= vocab_.size())
            continue;
        if (isSpecial(id)) {
            if (!skipSpecial)
                out += vocab_[std::size_t(id)];
            continue;
        }
        if (const auto bytes = symbolsToBytes(vocab_[std::size_t(id)]))
            out += *bytes;
        else
            out += vocab_[std::size_t(id)]; // not in the byte alphabet: written as spelled
    }
    return out;
}

nlohmann::json BpeTokenizer::toTokenizerJson() const {
    nlohmann::json vocab = nlohmann::json::object();
    nlohmann::json added = nlohmann::json::array();
    std::vector<SpecialToken> byId = special_;
    std::sort(byId.begin(), byId.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    for (const SpecialToken& s : byId)
        added.push_back({{"id", s.id},
                         {"content", s.text},
                         {"single_word", false},
                         {"lstrip", false},
                         {"rstrip", false},
                         {"normalized", false},
                         {"special", true}});
    for (std::size_t i = 0; i < vocab_.size(); ++i)
        if (!vocab_[i].empty())
            vocab[vocab_[i]] = i;
    return {{"version", "1.0"},
            {"truncation", nullptr},
            {"padding", nullptr},
            {"added_tokens", added},
            {"normalizer", nullptr},
            {"pre_tokenizer", pretokenizer_.tokenizerJson()},
            {"post_processor", nullptr},
            {"decoder",
             {{"type", "ByteLevel"},
              {"add_prefix_space", true},
              {"trim_offsets", true},
              {"use_regex", true}}},
            {"model",
             {{"type", "BPE"},
              {"dropout", nullptr},
              {"unk_token", unknown_ ? nlohmann::json(tokenText(*unknown_)) : nlohmann::json()},
              {"continuing_subword_prefix", nullptr},
              {"end_of_word_suffix", nullptr},
              {"fuse_unk", false},
              {"byte_fallback", false},
              {"ignore_merges", ignoreMerges_},
              {"vocab", vocab},
              {"merges", merges_}}}};
}

const std::string& BpeTokenizer::tokenText(TokenId id) const {
    static const std::string none;
    return id >= 0 && std::size_t(id) < vocab_.size() ? vocab_[std::size_t(id)] : none;
}

std::optional<TokenId> BpeTokenizer::tokenId(std::string_view text) const {
    const auto found = ids_.find(std::string(text));
    return found == ids_.end() ? std::nullopt : std::optional<TokenId>(found->second);
}

bool BpeTokenizer::isSpecial(TokenId id) const {
    return id >= 0 && std::size_t(id) < specialById_.size() && specialById_[std::size_t(id)];
}

} // namespace kwb::model
