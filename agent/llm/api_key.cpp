#include "agent/llm/api_key.h"

#include "agent/llm/ascii_case.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace kwb::agent {

std::string redactSecret(std::string_view text, std::string_view secret) {
    std::string out;
    if (secret.empty())
        return std::string(text);
    out.reserve(text.size());
    std::size_t from = 0;
    for (std::size_t at = text.find(secret); at != std::string_view::npos;
         at = text.find(secret, from)) {
        out.append(text.substr(from, at - from));
        out.append("[redacted]");
        from = at + secret.size();
    }
    out.append(text.substr(from));
    return out;
}

std::string redactSecrets(std::string_view text, const std::vector<std::string>& secrets) {
    std::string out(text);
    // Longest first, so a secret that contains another is replaced whole.
    std::vector<std::string> ordered = secrets;
    std::sort(ordered.begin(), ordered.end(),
              [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const std::string& secret : ordered)
        out = redactSecret(out, secret);
    return out;
}

std::string redactUrlCredentials(std::string_view url) {
    std::string out(url);
    const std::size_t scheme = out.find("://");
    const std::size_t authorityStart = scheme == std::string::npos ? 0 : scheme + 3;
    const std::size_t authorityEnd = out.find_first_of("/?#", authorityStart);
    const std::size_t at =
        out.rfind('@', authorityEnd == std::string::npos ? out.size() : authorityEnd);
    if (at != std::string::npos && at >= authorityStart)
        out.replace(authorityStart, at - authorityStart, "[redacted]");
    const std::size_t query = out.find('?');
    if (query == std::string::npos)
        return out;
    const std::size_t fragment = out.find('#', query);
    const std::size_t end = fragment == std::string::npos ? out.size() : fragment;
    std::string rebuilt = out.substr(0, query + 1);
    std::size_t start = query + 1;
    while (start <= end) {
        std::size_t amp = out.find('&', start);
        if (amp == std::string::npos || amp > end)
            amp = end;
        const std::string pair = out.substr(start, amp - start);
        const std::size_t equals = pair.find('=');
        if (equals != std::string::npos && isCredentialHeader(pair.substr(0, equals)))
            rebuilt += pair.substr(0, equals + 1) + "[redacted]";
        else
            rebuilt += pair;
        if (amp < end)
            rebuilt += '&';
        start = amp + 1;
    }
    return rebuilt + out.substr(end);
}

bool isCredentialHeader(std::string_view name) {
    const std::string lower = asciiLowerCase(name);
    for (const char* word : {"authorization", "key", "token", "secret", "cookie", "password"})
        if (lower.find(word) != std::string::npos)
            return true;
    return false;
}

ApiKey::ApiKey(std::string_view value) {
    const auto first = value.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos)
        value_ = value.substr(first, value.find_last_not_of(" \t\r\n") - first + 1);
}

ApiKey ApiKey::fromEnvironment(const std::string& variable) {
    if (variable.empty())
        return {};
    const char* value = std::getenv(variable.c_str());
    return value ? ApiKey(value) : ApiKey();
}

} // namespace kwb::agent
