#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kwb::agent {

// Every credential this process can see in its environment (values of at least 8 characters
// under a name kwb::looksLikeCredentialName accepts), not only the active provider's key: a model
// echoing any of them, a tool printing `env`, a stage's traceback must not carry one into a record,
// an export or a terminal.
std::vector<std::string> credentialsInEnvironment();

// `extra` plus credentialsInEnvironment(), without duplicates or values under 8 characters.
std::vector<std::string> knownSecrets(const std::vector<std::string>& extra = {});

// `text` with each credential of the environment (as credentialsInEnvironment finds them)
// written as "${NAME}", for settings that are stored and read back later (a rollout's base URL
// with a key in it): the store never holds the key, and expandEnvironmentReferences restores it
// from the same environment.
std::string withEnvironmentReferences(std::string_view text);
// The inverse: "${NAME}" of a credential variable that is set becomes its value.
std::string expandEnvironmentReferences(std::string_view text);

// Redacts secrets from text that arrives in pieces (a streamed reply printed as it comes): a
// secret split across two pieces is still caught, because the tail that could begin one is held
// back until the next piece (or flush()) shows how it ends.
class StreamRedactor {
public:
    explicit StreamRedactor(std::vector<std::string> secrets);
    // The part of `piece` (with what was held back before) that is safe to show now.
    std::string feed(std::string_view piece);
    // Whatever is still held back, redacted (the stream ended).
    std::string flush();
    // A whole text (not part of the stream) with the same secrets redacted.
    std::string redact(std::string_view text) const;

private:
    std::vector<std::string> secrets_;
    std::string pending_;
};

} // namespace kwb::agent
