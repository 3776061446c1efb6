#include "engine/cupti/sealed_line.h"

#include "engine/cupti/json_line.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace kwb::cupti {

std::string sealLine(std::string_view key, std::uint64_t sequence, std::string_view record) {
    if (key.empty())
        return {};
    if (!record.empty() && record.back() == '\n')
        record.remove_suffix(1);
    std::string sealed = std::to_string(sequence) + ' ';
    std::string message = sealed;
    message.append(record);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int macLength = 0;
    if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
              reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac,
              &macLength))
        return {};
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned int i = 0; i < macLength; ++i) {
        sealed += kHex[mac[i] >> 4];
        sealed += kHex[mac[i] & 0xf];
    }
    sealed += ' ';
    sealed.append(record);
    sealed += '\n';
    return sealed;
}

std::string formatFlushed(std::uint64_t monotonicNs, std::uint64_t cuptiNs,
                          std::uint64_t launches) {
    JsonLine line("flushed");
    line.field("at", monotonicNs).field("cupti", cuptiNs).field("launches", launches);
    return line.finish();
}

} // namespace kwb::cupti
