#include "agent/llm/completion.h"

namespace kwb::agent {

std::string_view stopReasonName(StopReason reason) {
    switch (reason) {
    case StopReason::EndTurn:
        return "end_turn";
    case StopReason::ToolUse:
        return "tool_use";
    case StopReason::MaxTokens:
        return "max_tokens";
    case StopReason::StopSequence:
        return "stop_sequence";
    case StopReason::ContentFilter:
        return "content_filter";
    case StopReason::Unknown:
        return "unknown";
    }
    return "unknown";
}

} // namespace kwb::agent
