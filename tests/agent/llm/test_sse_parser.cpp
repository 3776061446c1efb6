#include "agent/providers/sse_parser.h"

#include <gtest/gtest.h>

using namespace kwb::agent;

namespace {

std::vector<SseEvent> feedAll(SseParser& parser, const std::vector<std::string>& chunks) {
    std::vector<SseEvent> all;
    for (const auto& chunk : chunks)
        for (auto& event : parser.feed(chunk))
            all.push_back(std::move(event));
    return all;
}

const std::string kStream = ": keep-alive comment\r\n"
                            "event: message_start\r\n"
                            "data: {\"type\":\"message_start\"}\r\n"
                            "\r\n"
                            "data: line one\n"
                            "data:line two\n"
                            "id: 7\n"
                            "\n"
                            "event: ping\r"
                            "data: {}\r"
                            "\r"
                            "data: [DONE]\n\n";

void expectTheFourEvents(const std::vector<SseEvent>& events) {
    ASSERT_EQ(events.size(), 4u);
    EXPECT_EQ(events[0].event, "message_start");
    EXPECT_EQ(events[0].data, "{\"type\":\"message_start\"}");
    EXPECT_EQ(events[1].event, "");
    EXPECT_EQ(events[1].data, "line one\nline two");
    EXPECT_EQ(events[1].id, "7");
    EXPECT_EQ(events[2].event, "ping");
    EXPECT_EQ(events[2].data, "{}");
    EXPECT_EQ(events[2].id, "7"); // the last id carries over
    EXPECT_FALSE(events[2].isDone());
    EXPECT_TRUE(events[3].isDone());
}

} // namespace

TEST(SseParser, ParsesEventsNamesMultiLineDataCommentsAndDone) {
    SseParser parser;
    expectTheFourEvents(parser.feed(kStream));
    EXPECT_FALSE(parser.hasPartialEvent());
}

TEST(SseParser, SameEventsWhereverTheNetworkSplitsTheBytes) {
    for (std::size_t cut = 0; cut <= kStream.size(); ++cut) {
        SseParser parser;
        SCOPED_TRACE("split at " + std::to_string(cut));
        expectTheFourEvents(feedAll(parser, {kStream.substr(0, cut), kStream.substr(cut)}));
    }
    SseParser byteByByte;
    std::vector<std::string> bytes;
    for (char c : kStream)
        bytes.emplace_back(1, c);
    expectTheFourEvents(feedAll(byteByByte, bytes));
}

TEST(SseParser, AnEventIsDispatchedOnlyAtItsBlankLine) {
    SseParser parser;
    EXPECT_TRUE(parser.feed("data: {\"a\":").empty());
    EXPECT_TRUE(parser.hasPartialEvent());
    EXPECT_TRUE(parser.feed("1}\n").empty());
    EXPECT_TRUE(parser.hasPartialEvent()); // a cut here loses the event, as the standard says
    auto events = parser.feed("\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_FALSE(parser.hasPartialEvent());
}

TEST(SseParser, EdgeCasesOfTheFormat) {
    SseParser parser;
    // A byte-order mark, split; a field without a colon; an event with no data (not dispatched);
    // unknown fields; "data" alone is an empty data line.
    auto events = feedAll(parser, {"\xEF\xBB", "\xBF"
                                               "data\n\n"
                                               "event: lonely\n\n"
                                               "retry: 100\nfoo: bar\ndata:  two spaces\n\n"});
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].data, "");
    EXPECT_EQ(events[1].event, "");
    EXPECT_EQ(events[1].data, " two spaces"); // only one leading space is dropped
}

TEST(SseParser, NoByteOrderMarkKeepsTheFirstBytes) {
    SseParser parser;
    auto events = parser.feed("\xEF"
                              "data: x\n\n");
    ASSERT_EQ(events.size(), 0u); // "\xEF" + "data" is an unknown field name, not data
    events = parser.feed("data: y\n\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].data, "y");
}
