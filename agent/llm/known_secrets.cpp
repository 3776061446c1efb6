#include "agent/llm/known_secrets.h"

#include "agent/llm/api_key.h"
#include "engine/process/environment.h"

#include <algorithm>

namespace kwb::agent {
namespace {

constexpr std::size_t kShortestSecret = 8;

// (name, value) of each variable credentialsInEnvironment counts as a credential.
std::vector<std::pair<std::string, std::string>> credentialVariables() {
    std::vector<std::pair<std::string, std::string>> found;
    for (auto& [name, value] : currentEnvironment())
        if (value.size() >= kShortestSecret && looksLikeCredentialName(name))
            found.emplace_back(name, std::move(value));
    return found;
}

} // namespace

std::vector<std::string> credentialsInEnvironment() {
    std::vector<std::string> values;
    for (auto& [name, value] : credentialVariables())
        values.push_back(std::move(value));
    return values;
}

std::string withEnvironmentReferences(std::string_view text) {
    std::vector<std::pair<std::string, std::string>> credentials = credentialVariables();
    // Longest value first, so a key that contains another is replaced whole.
    std::sort(credentials.begin(), credentials.end(),
              [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    std::string out(text);
    for (const auto& [name, value] : credentials) {
        const std::string reference = "${" + name + "}";
        for (std::size_t at = out.find(value); at != std::string::npos;
             at = out.find(value, at + reference.size()))
            out.replace(at, value.size(), reference);
    }
    return out;
}

std::string expandEnvironmentReferences(std::string_view text) {
    std::string out(text);
    for (const auto& [name, value] : currentEnvironment()) {
        if (value.empty() || !looksLikeCredentialName(name))
            continue;
        const std::string reference = "${" + name + "}";
        for (std::size_t at = out.find(reference); at != std::string::npos;
             at = out.find(reference, at + value.size()))
            out.replace(at, reference.size(), value);
    }
    return out;
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

std::string StreamRedactor::redact(std::string_view text) const {
    return secrets_.empty() ? std::string(text) : redactSecrets(text, secrets_);
}

std::string StreamRedactor::flush() {
    std::string rest = secrets_.empty() ? std::move(pending_) : redactSecrets(pending_, secrets_);
    pending_.clear();
    return rest;
}

} // namespace kwb::agent
