#include "agent/providers/sse_parser.h"

namespace kwb::agent {

std::vector<SseEvent> SseParser::feed(std::string_view chunk) {
    static constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
    std::vector<SseEvent> out;
    for (char c : chunk) {
        if (!byteOrderMarkChecked_) {
            // Kept in line_ while it matches, so a mismatch leaves the bytes as ordinary text.
            if (c == kByteOrderMark[line_.size()]) {
                line_.push_back(c);
                if (line_.size() == kByteOrderMark.size()) {
                    line_.clear();
                    byteOrderMarkChecked_ = true;
                }
                continue;
            }
            byteOrderMarkChecked_ = true;
        }
        if (c == '\n' && lastWasCarriageReturn_) {
            lastWasCarriageReturn_ = false; // the second half of a CRLF
            continue;
        }
        lastWasCarriageReturn_ = c == '\r';
        if (c == '\n' || c == '\r') {
            processLine(line_, out);
            line_.clear();
        } else {
            line_.push_back(c);
        }
    }
    return out;
}

bool SseParser::hasPartialEvent() const {
    return !line_.empty() || pendingHasFields_;
}

void SseParser::processLine(std::string_view line, std::vector<SseEvent>& out) {
    if (line.empty()) {
        std::string lastId = pending_.id; // the id carries over to later events
        if (pendingHasData_) {
            pending_.data.pop_back(); // the '\n' after the last data line
            out.push_back(std::move(pending_));
        }
        pending_ = SseEvent{};
        pending_.id = std::move(lastId);
        pendingHasData_ = false;
        pendingHasFields_ = false;
        return;
    }
    if (line.front() == ':')
        return; // a comment, often a keep-alive
    std::string_view field = line;
    std::string_view value;
    if (const auto colon = line.find(':'); colon != std::string_view::npos) {
        field = line.substr(0, colon);
        value = line.substr(colon + 1);
        if (value.starts_with(' '))
            value.remove_prefix(1);
    }
    pendingHasFields_ = true;
    if (field == "data") {
        pending_.data.append(value);
        pending_.data.push_back('\n');
        pendingHasData_ = true;
    } else if (field == "event") {
        pending_.event = value;
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos)
            pending_.id = value;
    }
    // "retry" and unknown fields: nothing a single request/response stream needs.
}

} // namespace kwb::agent
