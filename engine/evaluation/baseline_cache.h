#pragma once

#include "engine/evaluation/evaluation_result.h"

#include <optional>
#include <stop_token>
#include <string>
#include <utility>

namespace kwb {

struct EvaluationOptions;

// Eager and torch.compile timings of a task, cached per task content, device, GPU model, torch
// version and timing settings, so the second evaluation of a task re-times only the candidate.
struct BaselineKey {
    std::string hash;
    std::string description;
};

struct CachedBaseline {
    TimingStats eager;
    TimingStats compiled;
};

BaselineKey baselineKeyFor(const std::string& taskPath, const std::string& device,
                           const std::string& deviceName, const std::string& torchVersion,
                           const EvaluationOptions& options);
std::optional<CachedBaseline> loadBaseline(const BaselineKey& key);
// Whether timings are fit to serve later evaluations: eager was timed, and no kept round of
// either baseline waited on a busy host (a later evaluation times them again instead: a baseline
// timed too slow would inflate every later candidate's speed-up).
bool worthCaching(const CachedBaseline& baseline);
void storeBaseline(const BaselineKey& key, const CachedBaseline& baseline);

// A key's turn to look up, time and store its baselines. Evaluations of one task that run side
// by side would each find no entry and time the baselines again, each holding the GPU alone
// for it; with turns, the first times them and the others wait and read its entry. Released
// when destroyed; a turn whose holder failed to store lets the next one time them.
class BaselineTurn {
public:
    // Waits until no other evaluation in this process has `key`'s turn; nullopt when `stop`
    // was requested first.
    static std::optional<BaselineTurn> take(const BaselineKey& key, std::stop_token stop);
    BaselineTurn(BaselineTurn&& other) noexcept : hash_(std::move(other.hash_)) {
        other.hash_.clear();
    }
    BaselineTurn& operator=(BaselineTurn&& other) noexcept {
        std::swap(hash_, other.hash_); // ours is released when `other` goes
        return *this;
    }
    BaselineTurn(const BaselineTurn&) = delete;
    ~BaselineTurn();

private:
    explicit BaselineTurn(std::string hash) : hash_(std::move(hash)) {}
    std::string hash_; // empty once moved from
};

} // namespace kwb
