#pragma once

#include "agent/store/episode_record.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kwb::ui {

enum class ConversationItemKind {
    System,
    User,
    ModelText,
    ToolCall,
    ToolResult,
    Evaluation,
    FileDiff,
    Steering,
    Status,
    Error,
};

// What an evaluation event shows as a card.
struct EvaluationCard {
    std::string verdict; // "correct, 1.42x vs eager" / "compile failed: ..."
    int reward = -1;
    double speedupVsEager = 0.0;   // 0: not measured
    double speedupVsCompile = 0.0; // 0: not measured
    bool correct = false;
    std::string trigger;            // "Verify", "Profile", "final"
    std::vector<std::string> flags; // "code (severity): reason"
};

// One row of the agent conversation, derived from one stored event. Qt-free so the wording is
// tested without widgets.
struct ConversationItem {
    ConversationItemKind kind = ConversationItemKind::Status;
    std::int64_t sequence = 0;
    std::string title;     // one line: what happened
    std::string body;      // the full text, shown when unfolded (or always when not foldable)
    bool foldable = false; // tool calls and results, prompts, diffs and long texts start folded
    bool problem = false;  // errors, failed tools, stuck warnings
    std::optional<EvaluationCard> evaluation;
};

ConversationItem conversationItemFor(const agent::EpisodeEvent& event);

} // namespace kwb::ui
