#include "engine/model/byte_level.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>

namespace kwb::model {

namespace {

struct Alphabet {
    std::array<char32_t, 256> symbolOf{};
    std::unordered_map<char32_t, std::uint8_t> byteOf;

    Alphabet() {
        // Bytes that are printable Latin-1 map to themselves; the rest take the code points
        // from 256 upwards, in byte order.
        const auto printable = [](int b) {
            return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        };
        char32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            symbolOf[std::size_t(b)] = printable(b) ? char32_t(b) : next++;
            byteOf[symbolOf[std::size_t(b)]] = std::uint8_t(b);
        }
    }
};

const Alphabet& alphabet() {
    static const Alphabet a;
    return a;
}

void appendUtf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += char(c);
    } else if (c < 0x800) {
        out += char(0xC0 | (c >> 6));
        out += char(0x80 | (c & 0x3F));
    } else {
        out += char(0xE0 | (c >> 12));
        out += char(0x80 | ((c >> 6) & 0x3F));
        out += char(0x80 | (c & 0x3F));
    }
}

} // namespace

std::string bytesToSymbols(std::string_view bytes) {
    const Alphabet& a = alphabet();
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char b : bytes)
        appendUtf8(out, a.symbolOf[b]);
    return out;
}

std::optional<std::string> symbolsToBytes(std::string_view symbols) {
    const Alphabet& a = alphabet();
    std::string out;
    out.reserve(symbols.size());
    for (std::size_t i = 0; i < symbols.size();) {
        const auto lead = static_cast<unsigned char>(symbols[i]);
        char32_t c;
        std::size_t length;
        // The alphabet only holds code points below U+0800: one or two UTF-8 bytes.
        if (lead < 0x80) {
            c = lead;
            length = 1;
        } else if ((lead & 0xE0) == 0xC0 && i + 1 < symbols.size()) {
            c = char32_t(lead & 0x1F) << 6 | char32_t(symbols[i + 1] & 0x3F);
            length = 2;
        } else {
            return std::nullopt;
        }
        const auto found = a.byteOf.find(c);
        if (found == a.byteOf.end())
            return std::nullopt;
        out += char(found->second);
        i += length;
    }
    return out;
}

std::string repairedUtf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char lead = byte(i);
        if (lead < 0x80) {
            out += char(lead);
            ++i;
            continue;
        }
        // The well-formed sequences (Unicode's table 3-7): the lead byte fixes the length and
        // the range of the second byte; later bytes are 80..BF.
        std::size_t length = 0;
        unsigned char low = 0x80, high = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            low = lead == 0xE0 ? 0xA0 : 0x80;
            high = lead == 0xED ? 0x9F : 0xBF;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            low = lead == 0xF0 ? 0x90 : 0x80;
            high = lead == 0xF4 ? 0x8F : 0xBF;
        }
        std::size_t valid = length == 0 ? 0 : 1; // bytes of a well-formed prefix
        while (valid > 0 && valid < length && i + valid < text.size()) {
            const unsigned char next = byte(i + valid);
            const bool fits =
                valid == 1 ? next >= low && next <= high : next >= 0x80 && next <= 0xBF;
            if (!fits)
                break;
            ++valid;
        }
        if (length != 0 && valid == length) {
            out.append(text.substr(i, length));
            i += length;
        } else {
            out += "\xEF\xBF\xBD"; // U+FFFD for the maximal ill-formed subpart
            i += std::max<std::size_t>(valid, 1);
        }
    }
    return out;
}

} // namespace kwb::model
