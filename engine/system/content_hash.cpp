#include "engine/system/content_hash.h"

#include <array>
#include <fstream>
#include <memory>
#include <openssl/evp.h>

namespace kwb {
namespace {

class Sha256 {
public:
    Sha256() : context_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
        EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr);
    }
    void update(const char* data, std::size_t size) {
        EVP_DigestUpdate(context_.get(), data, size);
    }
    std::string hex() {
        std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
        unsigned int length = 0;
        EVP_DigestFinal_ex(context_.get(), digest.data(), &length);
        static const char* digits = "0123456789abcdef";
        std::string out;
        for (unsigned int i = 0; i < length; ++i) {
            out.push_back(digits[digest[i] >> 4]);
            out.push_back(digits[digest[i] & 15]);
        }
        return out;
    }

private:
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context_;
};

} // namespace

std::string sha256Hex(const std::string& bytes) {
    Sha256 hash;
    hash.update(bytes.data(), bytes.size());
    return hash.hex();
}

std::string sha256OfFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return {};
    Sha256 hash;
    std::array<char, 65536> buffer{};
    while (in) {
        in.read(buffer.data(), buffer.size());
        hash.update(buffer.data(), static_cast<std::size_t>(in.gcount()));
    }
    return hash.hex();
}

} // namespace kwb
