#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kwb {

// What an inspect stage's description of a task's reference depends on: the reference's bytes,
// the device it ran on, the seed its inputs were drawn with (unless the stage found that it does
// not), the input budget it was sized against and the interpreter (torch) that ran it. Never the
// candidate. pair_mode goes with the request's shape too.
struct ReferenceDescriptionKey {
    std::string referenceSha256; // sha256OfFile of the reference, lower-case hex
    std::string device;          // "cpu" or "cuda"
    std::uint64_t seed = 0;
    std::uint64_t inputBudgetBytes = 0;
    std::string python;
    bool pairMode = false;

    bool operator==(const ReferenceDescriptionKey&) const = default;
};

// Successful inspect descriptions of references ({"inputs", "init_inputs", "outputs",
// "parameters", "has_get_inputs", "has_get_init_inputs"}), kept in kwb's memory by an evaluation
// service so that its next evaluation of the same reference need not build and run the
// reference on the GPU again: inspect then imports it on the CPU for the source checks and takes
// no GPU lane. Filled only from inspect runs of the reference itself, never from anything a
// candidate's process wrote. Bounded: the oldest entry goes first. Thread-safe.
//
// A description the stage found not to depend on the seed (description_seed_independent) is kept
// under the key without its seed, where every seed finds it: RL rollouts and KernelBench pairs
// draw a fresh seed per evaluation, and would otherwise never find one.
class ReferenceDescriptions {
public:
    static constexpr std::size_t kDefaultCapacity = 256;
    explicit ReferenceDescriptions(std::size_t capacity = kDefaultCapacity);

    // The description kept under `key` itself, else the one kept for any seed.
    std::optional<nlohmann::json> find(const ReferenceDescriptionKey& key) const;
    // Keeps `description` when it has every field with its type (descriptionIn); false otherwise.
    // `anySeed`: under the key without its seed alone (one entry serves every seed).
    bool store(const ReferenceDescriptionKey& key, const nlohmann::json& description,
               bool anySeed = false);
    std::size_t size() const;

private:
    std::size_t capacity_;
    mutable std::mutex mutex_;
    std::list<std::string> order_; // oldest first
    std::map<std::string, nlohmann::json> entries_;
};

// The description fields of an inspect result, or nullopt when one is missing or mistyped.
std::optional<nlohmann::json> descriptionIn(const nlohmann::json& inspectResult);

} // namespace kwb
