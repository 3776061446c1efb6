#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kwb::agent {

// Replaces every occurrence of `secret` in `text` with "[redacted]". Servers echo keys back in
// error bodies ("Incorrect API key provided: sk-...") and URLs may carry them, so every string
// the provider layer hands out goes through this first.
std::string redactSecret(std::string_view text, std::string_view secret);
std::string redactSecrets(std::string_view text, const std::vector<std::string>& secrets);

// Header names whose values are credentials (Authorization, x-api-key, api-key, cookies, ...).
bool isCredentialHeader(std::string_view name);

// A URL with the credentials it may carry masked: the userinfo ("user:KEY@") and the values of
// query parameters named like credentials ("?key=", "api_key=", "token="), each "[redacted]".
// For what is shown or kept of a base URL; the request itself uses the real one.
std::string redactUrlCredentials(std::string_view url);

// An API key. It has no stream operator and no implicit conversion to a string, so it cannot
// slip into a log line or a message by accident; reveal() is for the request header only.
class ApiKey {
public:
    ApiKey() = default;
    // Surrounding whitespace is dropped: a key pasted or read from a file often ends in a
    // newline, which would break the request header.
    explicit ApiKey(std::string_view value);

    // Empty when the variable is unset or empty.
    static ApiKey fromEnvironment(const std::string& variable);

    bool empty() const { return value_.empty(); }
    const std::string& reveal() const { return value_; }
    std::string redact(std::string_view text) const { return redactSecret(text, value_); }

private:
    std::string value_;
};

} // namespace kwb::agent
