#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kwb::agent {

// One server-sent event. `event` is empty when the server named none.
struct SseEvent {
    std::string event;
    std::string data; // the data lines joined with '\n'
    std::string id;

    // OpenAI-style streams end with "data: [DONE]".
    bool isDone() const { return data == "[DONE]"; }
};

// Incremental parser for text/event-stream (the WHATWG rules): network chunks may split a line,
// or a CRLF, anywhere, so bytes are kept until a line and then an event are complete.
class SseParser {
public:
    // Returns the events that the bytes so far complete, in order.
    std::vector<SseEvent> feed(std::string_view chunk);

    // True when the stream stopped inside an event (a line or fields not yet closed by a blank
    // line): a cut-off stream. Such an event is never dispatched, as the standard requires.
    bool hasPartialEvent() const;

private:
    void processLine(std::string_view line, std::vector<SseEvent>& out);

    std::string line_;
    SseEvent pending_;
    bool pendingHasData_ = false;
    bool pendingHasFields_ = false;
    bool lastWasCarriageReturn_ = false;
    bool byteOrderMarkChecked_ = false;
};

} // namespace kwb::agent
