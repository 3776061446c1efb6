#pragma once

#include "engine/evaluation/evaluator.h"
#include "engine/service/evaluation_service.h"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kwb::agent {

// How the loop keeps the conversation inside the token budget. When the estimate exceeds the
// budget, the oldest tool results' text (never the system prompt, never a message of the last
// `keepRecentTurns` assistant turns and their tool results) is replaced, oldest first, by
// "[output of <tool> at step N pruned: M chars]" until the estimate fits again.
struct PruningPolicy {
    int keepRecentTurns = 4;
    std::size_t minCharsToPrune = 200; // shorter results are not worth a note
};

// Everything one episode runs with. Holds no API key: the provider is passed in already built.
struct EpisodeConfig {
    std::string taskPath;  // the task file; recorded as the episode's task (empty: workspace)
    std::string workspace; // the workspace folder the tools act on (a fork's new folder)
    // The provider's describe() text and model, for the record; empty: asked from the provider.
    std::string providerDescription;
    std::string model;
    nlohmann::json extraSettings = nlohmann::json::object(); // merged into the record's settings

    int maxTurns = 200;                       // assistant replies, a fork's copied ones included
    std::int64_t contextTokenBudget = 128000; // the context the model may see
    int charsPerToken = 4;                    // the estimate when the provider reports no usage
    PruningPolicy pruning;

    int stuckWarnAfter = 3; // the same call or error this many times in a row: a "stuck" event
    int stuckStopAfter = 6; // ... and this many: the episode stops

    EvaluationOptions evaluation; // the Compile / Verify / Profile tools and the final evaluation
    std::string python;           // the task interpreter; empty: auto-detect
    bool finalEvaluation = true;  // evaluate the workspace when the episode ends (not on stop())
    // Where the tools and the final evaluation submit (not owned); null: evaluators of their own.
    EvaluationService* evaluations = nullptr;

    // A reply cut off after it began to stream (a dropped connection, a proxy's timeout) is
    // asked for again this many times per model call; the partial reply is dropped, and the
    // cut is an error event in the record. The provider retries failures before any output.
    int cutReplyRetries = 2;
    // A "context too long" answer shrinks the budget below what was sent and prunes to it; the
    // call is made again this many times before the episode ends as "context_full".
    int contextOverflowRetries = 3;
    // A reply without tool calls cut by the output token limit is not the model stopping: it is
    // told so and goes on, this many times in a row before the episode ends as "token_limit".
    int tokenLimitContinuations = 3;

    std::optional<int> maxTokens; // per completion
    std::optional<double> temperature;
    // The episode's seed: its n-th model request (retries included) asks for seed + n, so a
    // request asked again after a cut or malformed reply is not the same draw. Unset: none.
    std::optional<std::uint64_t> seed;
    bool stream = true;
    // Every reply's sampled tokens and log-probabilities kept in its event (CompletionRequest).
    bool logprobs = false;
    bool tokenIds = false;
};

} // namespace kwb::agent
