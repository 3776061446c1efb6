#include "engine/model/pretokenizer.h"

#include "engine/model/byte_level.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace kwb::model {

const char* const kGpt2SplitPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

// Llama 3's and Qwen2's patterns (their tokenizer.json files carry the same strings).
const char* const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

} // namespace

struct Pretokenizer::Compiled {
    pcre2_code* code = nullptr;
    ~Compiled() { pcre2_code_free(code); }
};

bool Pretokenizer::add(const std::string& pattern, std::string* error) {
    int code = 0;
    PCRE2_SIZE offset = 0;
    // UTF: the text is UTF-8; UCP: \s, \d and friends follow Unicode, as the Rust regex and
    // Oniguruma engines of `tokenizers` do.
    pcre2_code* compiled =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                      PCRE2_UTF | PCRE2_UCP, &code, &offset, nullptr);
    if (!compiled) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(code, message, sizeof message);
        if (error)
            *error = "cannot compile the split pattern " + pattern + ": " +
                     reinterpret_cast<const char*>(message) + " at " + std::to_string(offset);
        return false;
    }
    pcre2_jit_compile(compiled, PCRE2_JIT_COMPLETE); // an interpreter fallback where JIT is off
    auto step = std::make_shared<Compiled>();
    step->code = compiled;
    steps_.push_back(std::move(step));
    return true;
}

std::optional<Pretokenizer> Pretokenizer::forGgufName(const std::string& name, std::string* error) {
    Pretokenizer p;
    bool ok = false;
    const nlohmann::json byteLevel = {{"type", "ByteLevel"},
                                      {"add_prefix_space", false},
                                      {"trim_offsets", true},
                                      {"use_regex", true}};
    const auto splitThenBytes = [&](const char* pattern) {
        nlohmann::json bytes = byteLevel;
        bytes["use_regex"] = false;
        return nlohmann::json{{"type", "Sequence"},
                              {"pretokenizers",
                               {{{"type", "Split"},
                                 {"pattern", {{"Regex", pattern}}},
                                 {"behavior", "Isolated"},
                                 {"invert", false}},
                                bytes}}};
    };
    if (name.empty() || name == "default" || name == "gpt2" || name == "gpt-2") {
        ok = p.add(kGpt2SplitPattern, error);
        p.config_ = byteLevel;
    } else if (name == "smollm") {
        // Digits one by one first (SmolLM2's tokenizer.json: Digits with individual_digits).
        ok = p.add(R"(\p{N})", error) && p.add(kGpt2SplitPattern, error);
        p.config_ = {
            {"type", "Sequence"},
            {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", true}}, byteLevel}}};
    } else if (name == "llama-bpe" || name == "llama3") {
        ok = p.add(kLlama3Pattern, error);
        p.config_ = splitThenBytes(kLlama3Pattern);
    } else if (name == "qwen2") {
        ok = p.add(kQwen2Pattern, error);
        p.config_ = splitThenBytes(kQwen2Pattern);
    } else if (error) {
        *error = "unknown pre-tokenizer '" + name +
                 "' (known: gpt2, smollm, llama-bpe, qwen2); a tokenizer.json beside the model "
                 "names its patterns";
    }
    return ok ? std::optional<Pretokenizer>(std::move(p)) : std::nullopt;
}

std::optional<Pretokenizer> Pretokenizer::fromTokenizerJson(const nlohmann::json& config,
                                                            std::string* error) {
    Pretokenizer p;
    // Flatten a Sequence into its steps, in order.
    std::vector<const nlohmann::json*> pending{&config};
    std::vector<const nlohmann::json*> flat;
    while (!pending.empty()) {
        const nlohmann::json* c = pending.front();
        pending.erase(pending.begin());
        if (c->is_object() && c->value("type", "") == "Sequence" && c->contains("pretokenizers") &&
            (*c)["pretokenizers"].is_array()) {
            std::vector<const nlohmann::json*> inner;
            for (const nlohmann::json& step : (*c)["pretokenizers"])
                inner.push_back(&step);
            pending.insert(pending.begin(), inner.begin(), inner.end());
        } else {
            flat.push_back(c);
        }
    }
    p.config_ = config;
    for (const nlohmann::json* c : flat) {
        const std::string type = c->is_object() ? c->value("type", "") : "";
        if (type == "ByteLevel") {
            // The byte-to-symbol mapping is the BPE's business; only the regex splits here.
            if (c->value("add_prefix_space", false)) {
                if (error)
                    *error = "ByteLevel with add_prefix_space is not supported";
                return std::nullopt;
            }
            if (c->value("use_regex", true) && !p.add(kGpt2SplitPattern, error))
                return std::nullopt;
        } else if (type == "Digits") {
            if (!p.add(c->value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)", error))
                return std::nullopt;
        } else if (type == "Split") {
            const nlohmann::json pattern = c->value("pattern", nlohmann::json::object());
            const std::string behavior = c->value("behavior", "Isolated");
            if (behavior != "Isolated" || c->value("invert", false) || !pattern.is_object()) {
                if (error)
                    *error = "Split with behavior " + behavior + " is not supported (Isolated is)";
                return std::nullopt;
            }
            std::string regex;
            if (pattern.contains("Regex") && pattern["Regex"].is_string())
                regex = pattern["Regex"].get<std::string>();
            else if (pattern.contains("String") && pattern["String"].is_string()) {
                // A literal: quoted for PCRE2.
                regex = "\\Q" + pattern["String"].get<std::string>() + "\\E";
            }
            if (regex.empty() || !p.add(regex, error)) {
                if (error && error->empty())
                    *error = "Split without a pattern";
                return std::nullopt;
            }
        } else {
            if (error)
                *error = "pre-tokenizer '" + type + "' is not supported";
            return std::nullopt;
        }
    }
    return p;
}

std::vector<std::string> Pretokenizer::split(std::string_view text) const {
    // Repaired once here, so no match below re-checks the rest of the text (PCRE2 validates
    // from the start offset to the end on every call otherwise: quadratic in a long text).
    std::vector<std::string> pieces{repairedUtf8(text)};
    for (const auto& step : steps_) {
        pcre2_match_data* match = pcre2_match_data_create_from_pattern(step->code, nullptr);
        std::vector<std::string> next;
        for (const std::string& piece : pieces) {
            const auto subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
            std::size_t at = 0;  // where the next search starts
            std::size_t gap = 0; // where the text not yet emitted starts
            while (at <= piece.size()) {
                const int found = pcre2_match(step->code, subject, piece.size(), at,
                                              PCRE2_NO_UTF_CHECK, match, nullptr);
                if (found < 0)
                    break; // no more matches
                const PCRE2_SIZE* span = pcre2_get_ovector_pointer(match);
                if (span[0] > gap)
                    next.push_back(piece.substr(gap, span[0] - gap));
                if (span[1] > span[0]) {
                    next.push_back(piece.substr(span[0], span[1] - span[0]));
                    at = span[1];
                } else {
                    // An empty match: step over one UTF-8 character.
                    at = span[1] + 1;
                    while (at < piece.size() &&
                           (static_cast<unsigned char>(piece[at]) & 0xC0) == 0x80)
                        ++at;
                }
                gap = std::max<std::size_t>(gap, span[1]);
            }
            if (gap < piece.size())
                next.push_back(piece.substr(gap));
        }
        pcre2_match_data_free(match);
        pieces = std::move(next);
    }
    return pieces;
}

} // namespace kwb::model
