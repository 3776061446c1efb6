#pragma once

#include "agent/llm/token_usage.h"

#include <optional>
#include <string>
#include <string_view>

namespace kwb::agent {

// List prices in US dollars per million tokens. Prices change and differ per contract, so the
// table is small, says what it assumes, and an unknown model costs "n/a", never a guess.
struct ModelPrice {
    double inputPerMillion = 0;
    double cachedInputPerMillion = 0; // reads from the prompt cache
    double outputPerMillion = 0;
};

// The price of a model by name: an exact entry, or the entry whose name the model starts with
// ("gpt-4o-2024-08-06" -> "gpt-4o"), preferring the longest. std::nullopt when unknown.
std::optional<ModelPrice> priceOf(std::string_view model);

// What the usage cost at that price. Cached tokens are part of inputTokens (TokenUsage's rule).
double costOf(const TokenUsage& usage, const ModelPrice& price);

// "$0.0123", or "n/a" for a model without a price.
std::string costText(const TokenUsage& usage, std::string_view model);

// Prices the user maintains (contract prices, new models, self-hosted costs) replace the built-in
// table's entries and add to it: a JSON object {"model-name": {"input": 2.5, "cached_input": 1.25,
// "output": 10}} in US dollars per million tokens ("cached_input" defaults to "input"). Returns
// the number of entries read; on a malformed file, 0 with the reason in `error`, and the prices
// in use stay as they were.
int loadPriceOverrides(const std::string& path, std::string* error = nullptr);
// Back to the built-in table alone (tests).
void clearPriceOverrides();

} // namespace kwb::agent
