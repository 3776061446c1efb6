#pragma once

#include <cstdint>
#include <vector>

namespace kwb::model {

// What constrained decoding asks of a constraint (GrammarMatcher is one): before each token, the
// ids that may come next; after it, the token taken. The sampler masks every other id out, so a
// structured action is always well formed.
class TokenConstraint {
public:
    virtual ~TokenConstraint() = default;
    virtual std::vector<std::uint8_t> allowedTokens() const = 0; // 1 where allowed
    virtual bool accept(std::int32_t token) = 0;                 // false: not allowed
};

} // namespace kwb::model
