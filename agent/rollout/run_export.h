#pragma once

#include "agent/store/trajectory_store.h"

#include <cstddef>
#include <ostream>
#include <string>

namespace kwb::agent {

// What `kwb export RUN --format F` writes, one JSON object per line:
//  - verl: veRL RL rows, one per task of the run: data_source, prompt (the system and first user
//    message as chat messages), ability, reward_model {style "rule", ground_truth: the task id;
//    the reward itself comes from the evaluator}, extra_info (task, level, task file, run);
//  - verl-sft: veRL multi-turn SFT rows, one per settled episode: messages (OpenAI chat format,
//    tool calls included), tools (the agent's tool schemas as functions), per message loss_mask
//    (1 for the model's own replies, 0 for prompts and tool output) and sampled_tokens (a
//    reply's tokens, log-probabilities and ids as the server sent them, when asked for; else
//    null), the reward and its GRPO advantage within the task's group, and per model turn PPO's
//    return and GAE advantage (gamma 1, lambda 0.95, no critic yet: V = 0; null elsewhere);
//  - rft: verl-sft rows of the successful episodes only (reward >= min reward), without the
//    ones that looped (a "stuck" status) or made an invalid tool call (an unknown tool, or
//    arguments that are not JSON or do not fit the tool's schema): CUDA Agent's rejection
//    fine-tuning set;
//  - openrlhf: OpenRLHF rows, one per settled episode, for its prompt datasets and reinforced
//    fine-tuning (`--input_key input --label_key label --apply_chat_template`): input (the system
//    and first user message as chat messages), label (the task id, what a reward function keys
//    on), datasource, output (the rest of the conversation: the model's turns, tool calls and
//    tool results), reward and its GRPO advantage;
//  - jsonl: the run's episodes as `kwb episodes export` writes them (replay, import).
enum class RunExportFormat { Verl, VerlSft, Rft, OpenRlhf, Jsonl };

std::optional<RunExportFormat> parseRunExportFormat(const std::string& name);

struct RunExportOptions {
    RunExportFormat format = RunExportFormat::Jsonl;
    double minReward = 1.0; // rft
};

// Returns the rows written.
StoreResult<std::size_t> exportRun(TrajectoryStore& store, RunId run,
                                   const RunExportOptions& options, std::ostream& out);

} // namespace kwb::agent
