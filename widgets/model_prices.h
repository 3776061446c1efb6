#pragma once

#include "agent/token_usage.h"

#include <optional>
#include <string>
#include <string_view>

namespace kwb::ui {

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
double costOf(const agent::TokenUsage& usage, const ModelPrice& price);

// "$0.0123", or "n/a" for a model without a price.
std::string costText(const agent::TokenUsage& usage, std::string_view model);

} // namespace kwb::ui
