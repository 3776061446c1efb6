#include "agent/llm/known_secrets.h"

#include "agent/llm/api_key.h"

#include <algorithm>
#include <array>
#include <cctype>

extern char** environ;

namespace kwb::agent {
namespace {

constexpr std::size_t kShortestSecret = 8;

std::string upper(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

} // namespace

bool looksLikeCredentialName(std::string_view name) {
    const std::string n = upper(name);
    static constexpr std::array kWords = {"KEY",        "TOKEN", "SECRET", "PASSWORD", "PASSWD",
                                          "CREDENTIAL", "AUTH",  "COOKIE", "SESSION"};
    for (const char* word : kWords)
        if (n.find(word) != std::string::npos)
            return true;
    static constexpr std::array kFamilies = {"AWS_", "AZURE_", "GOOGLE_", "GCP_",   "GCLOUD_",
                                             "HF_",  "GH_",    "GITHUB_", "OPENAI", "ANTHROPIC"};
    for (const char* family : kFamilies)
        if (n.rfind(family, 0) == 0)
            return true;
    return false;
}

std::vector<std::string> credentialsInEnvironment() {
    std::vector<std::string> values;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string_view kv(*entry);
        const auto eq = kv.find('=');
        if (eq == std::string_view::npos)
            continue;
        const std::string_view value = kv.substr(eq + 1);
        if (value.size() >= kShortestSecret && looksLikeCredentialName(kv.substr(0, eq)))
            values.emplace_back(value);
    }
    return values;
}

std::vector<std::string> knownSecrets(const std::vector<std::string>& extra) {
    std::vector<std::string> all;
    for (const std::string& s : extra)
        if (s.size() >= kShortestSecret)
            all.push_back(s);
    for (std::string& s : credentialsInEnvironment())
        all.push_back(std::move(s));
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
}

StreamRedactor::StreamRedactor(std::vector<std::string> secrets) {
    for (std::string& s : secrets)
        if (s.size() >= kShortestSecret)
            secrets_.push_back(std::move(s));
}

std::string StreamRedactor::feed(std::string_view piece) {
    if (secrets_.empty())
        return std::string(piece);
    // Whole secrets first, so the held-back tail is computed on text that no longer holds one.
    pending_ = redactSecrets(pending_ + std::string(piece), secrets_);
    std::size_t hold = 0;
    for (const std::string& secret : secrets_) {
        const std::size_t most = std::min(secret.size() - 1, pending_.size());
        for (std::size_t n = most; n > hold; --n)
            if (pending_.compare(pending_.size() - n, n, secret, 0, n) == 0) {
                hold = n;
                break;
            }
    }
    std::string ready = pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return ready;
}

std::string StreamRedactor::flush() {
    std::string rest = secrets_.empty() ? std::move(pending_) : redactSecrets(pending_, secrets_);
    pending_.clear();
    return rest;
}

} // namespace kwb::agent
