#include "engine/evaluation/reference_descriptions.h"

#include <algorithm>

namespace kwb {
namespace {

using nlohmann::json;

// One string per key: its parts in a JSON array, so no part can run into the next. Without its
// seed, null stands in its place: no seed's key is that one.
std::string flattened(const ReferenceDescriptionKey& key, bool anySeed) {
    return json::array({key.referenceSha256, key.device, anySeed ? json() : json(key.seed),
                        key.inputBudgetBytes, key.python, key.pairMode})
        .dump();
}

bool isArrayOf(const json& value, bool (json::*kind)() const) {
    return value.is_array() &&
           std::all_of(value.begin(), value.end(), [kind](const json& v) { return (v.*kind)(); });
}

} // namespace

ReferenceDescriptions::ReferenceDescriptions(std::size_t capacity)
    : capacity_(std::max<std::size_t>(capacity, 1)) {}

std::optional<json> ReferenceDescriptions::find(const ReferenceDescriptionKey& key) const {
    std::lock_guard lock(mutex_);
    for (const bool anySeed : {false, true})
        if (const auto found = entries_.find(flattened(key, anySeed)); found != entries_.end())
            return found->second;
    return std::nullopt;
}

bool ReferenceDescriptions::store(const ReferenceDescriptionKey& key, const json& description,
                                  bool anySeed) {
    std::optional<json> kept = descriptionIn(description);
    if (!kept || key.referenceSha256.empty())
        return false;
    const std::string flat = flattened(key, anySeed);
    std::lock_guard lock(mutex_);
    if (auto found = entries_.find(flat); found != entries_.end()) {
        found->second = std::move(*kept);
        return true;
    }
    if (entries_.size() >= capacity_) {
        entries_.erase(order_.front());
        order_.pop_front();
    }
    order_.push_back(flat);
    entries_.emplace(flat, std::move(*kept));
    return true;
}

std::size_t ReferenceDescriptions::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

std::optional<json> descriptionIn(const json& inspectResult) {
    if (!inspectResult.is_object())
        return std::nullopt;
    json description = json::object();
    for (const char* field : {"inputs", "init_inputs", "outputs"}) {
        if (!inspectResult.contains(field) || !isArrayOf(inspectResult[field], &json::is_object))
            return std::nullopt;
        description[field] = inspectResult[field];
    }
    if (!inspectResult.contains("parameters") ||
        !isArrayOf(inspectResult["parameters"], &json::is_string))
        return std::nullopt;
    description["parameters"] = inspectResult["parameters"];
    for (const char* field : {"has_get_inputs", "has_get_init_inputs"}) {
        if (!inspectResult.contains(field) || !inspectResult[field].is_boolean())
            return std::nullopt;
        description[field] = inspectResult[field];
    }
    return description;
}

} // namespace kwb
