#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::test {

// What a Verify call in the soak evaluates.
enum class Variant {
    Good,   // correct
    Wrong,  // runs, wrong numbers
    Hang,   // sleeps past the stage timeout
    Crash,  // the candidate's process dies of a signal
    Broken, // does not import (a syntax error)
};
std::string_view variantName(Variant variant);

// model_new.py for the tiny test task, unique per step so that no two Writes look alike.
std::string soakCandidate(Variant variant, int step);

// The soak's script, drawn from one seed: episodes of Write + Verify pairs, the scripted LLM
// server's turns for all of them in order, and the faults some turns serve first.
struct SoakPlan {
    std::vector<std::vector<Variant>> episodes;
    nlohmann::json turns = nlohmann::json::array(); // with "faults" where planned
    std::chrono::milliseconds killIntervalMin{1500};
    std::chrono::milliseconds killIntervalMax{5000};

    const nlohmann::json& scriptTurns() const { return turns; }
    std::size_t requestCount() const; // one per turn and one per fault
    int faultCount() const;
    int cutStreamCount() const;
};

SoakPlan makeSoakPlan(int evaluations, std::uint32_t seed);

} // namespace kwb::test
