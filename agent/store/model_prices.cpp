#include "agent/store/model_prices.h"

#include "engine/system/bounded_json.h"

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

namespace kwb::agent {
namespace {

// Public list prices (USD per million tokens: input, cached input, output) of a few common
// hosted models, as published by OpenAI and Anthropic in 2025 (GPT-4.1 and GPT-4.1 mini checked
// against the published rates again in November 2026). Local servers (vLLM, SGLang, llama.cpp,
// Ollama) have no price and show "n/a". Users correct or extend the table with
// loadPriceOverrides.
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

// The user's prices, read once at start-up (UI thread) and read by the meters.
std::mutex overridesMutex;
std::map<std::string, ModelPrice, std::less<>> overrides;

} // namespace

std::optional<ModelPrice> priceOf(std::string_view model) {
    std::optional<ModelPrice> best;
    std::size_t bestLength = 0;
    auto consider = [&](std::string_view name, const ModelPrice& price) {
        // >= lets a user entry replace a built-in one of the same name (they come second).
        if (model.substr(0, name.size()) == name && name.size() >= bestLength) {
            best = price;
            bestLength = name.size();
        }
    };
    for (const auto& [name, price] : kPrices)
        consider(name, price);
    std::lock_guard lock(overridesMutex);
    for (const auto& [name, price] : overrides)
        consider(name, price);
    return best;
}

int loadPriceOverrides(const std::string& path, std::string* error) {
    auto fail = [&](const std::string& why) {
        if (error)
            *error = path + ": " + why;
        return 0;
    };
    std::ifstream in(path);
    if (!in)
        return fail("cannot read the file");
    const nlohmann::json doc = parseBoundedJson(in);
    if (!doc.is_object())
        return fail("expected a JSON object of model names to prices");
    std::map<std::string, ModelPrice, std::less<>> read;
    for (const auto& item : doc.items()) {
        // Named references, not structured bindings: lambdas may not capture those (clang 14).
        const std::string& name = item.key();
        const nlohmann::json& entry = item.value();
        auto number = [&](const char* key) -> std::optional<double> {
            if (!entry.is_object() || !entry.contains(key))
                return std::nullopt;
            const auto& v = entry[key];
            if (!v.is_number() || v.get<double>() < 0)
                return std::nullopt;
            return v.get<double>();
        };
        const auto input = number("input");
        const auto output = number("output");
        if (name.empty() || !input || !output)
            return fail("entry '" + name +
                        "' needs non-negative numbers \"input\" and \"output\" (USD per "
                        "million tokens)");
        if (entry.contains("cached_input") && !number("cached_input"))
            return fail("entry '" + name + "': \"cached_input\" must be a non-negative number");
        read[name] = {*input, number("cached_input").value_or(*input), *output};
    }
    std::lock_guard lock(overridesMutex);
    overrides = std::move(read);
    return static_cast<int>(overrides.size());
}

void clearPriceOverrides() {
    std::lock_guard lock(overridesMutex);
    overrides.clear();
}

double costOf(const TokenUsage& reported, const ModelPrice& price) {
    // Stored usage may predate the clamping where it is parsed; a cost is never negative.
    const TokenUsage usage = reported.clamped();
    const double cached = static_cast<double>(usage.cachedInputTokens.value_or(0));
    const double uncached = static_cast<double>(usage.inputTokens) - cached;
    return (uncached * price.inputPerMillion + cached * price.cachedInputPerMillion +
            static_cast<double>(usage.outputTokens) * price.outputPerMillion) /
           1e6;
}

std::string costText(const TokenUsage& usage, std::string_view model) {
    const auto price = priceOf(model);
    if (!price)
        return "n/a";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "$%.4f", costOf(usage, *price));
    return buffer;
}

} // namespace kwb::agent
