#include "widgets/model_prices.h"

#include <array>
#include <cstdio>
#include <utility>

namespace kwb::ui {
namespace {

// Public list prices (USD per million tokens: input, cached input, output) of a few common
// hosted models, as published by OpenAI and Anthropic in 2025. Local servers (vLLM, SGLang,
// llama.cpp, Ollama) have no price and show "n/a".
constexpr std::array<std::pair<std::string_view, ModelPrice>, 9> kPrices = {{
    {"gpt-4o-mini", {0.15, 0.075, 0.60}},
    {"gpt-4o", {2.50, 1.25, 10.00}},
    {"gpt-4.1-mini", {0.40, 0.10, 1.60}},
    {"gpt-4.1", {2.00, 0.50, 8.00}},
    {"o3-mini", {1.10, 0.55, 4.40}},
    {"claude-3-5-haiku", {0.80, 0.08, 4.00}},
    {"claude-3-5-sonnet", {3.00, 0.30, 15.00}},
    {"claude-sonnet-4", {3.00, 0.30, 15.00}},
    {"claude-opus-4", {15.00, 1.50, 75.00}},
}};

} // namespace

std::optional<ModelPrice> priceOf(std::string_view model) {
    std::optional<ModelPrice> best;
    std::size_t bestLength = 0;
    for (const auto& [name, price] : kPrices)
        if (model.substr(0, name.size()) == name && name.size() > bestLength) {
            best = price;
            bestLength = name.size();
        }
    return best;
}

double costOf(const agent::TokenUsage& usage, const ModelPrice& price) {
    const double cached = static_cast<double>(usage.cachedInputTokens.value_or(0));
    const double uncached = static_cast<double>(usage.inputTokens) - cached;
    return (uncached * price.inputPerMillion + cached * price.cachedInputPerMillion +
            static_cast<double>(usage.outputTokens) * price.outputPerMillion) /
           1e6;
}

std::string costText(const agent::TokenUsage& usage, std::string_view model) {
    const auto price = priceOf(model);
    if (!price)
        return "n/a";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "$%.4f", costOf(usage, *price));
    return buffer;
}

} // namespace kwb::ui
