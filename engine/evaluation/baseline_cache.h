#pragma once

#include "engine/evaluation/evaluation_result.h"

#include <optional>
#include <string>

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
void storeBaseline(const BaselineKey& key, const CachedBaseline& baseline);

} // namespace kwb
