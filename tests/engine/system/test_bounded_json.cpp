// JSON from outside kwb: too deep or too large is an error, never a crash.
#include "engine/system/bounded_json.h"

#include <gtest/gtest.h>
#include <sstream>
#include <string>

using namespace kwb;

TEST(BoundedJson, ParsesOrdinaryJson) {
    std::string error = "stale";
    const auto value = parseBoundedJson(R"({"a": [1, {"b": "]]}}"}], "c": "\"{"})", {}, &error);
    ASSERT_FALSE(value.is_discarded());
    EXPECT_EQ(value["a"][1]["b"], "]]}}");
    EXPECT_EQ(error, "");
    EXPECT_EQ(jsonNestingDepth(R"({"a": [1, {"b": "]]}}"}]})", 100), 3);
}

TEST(BoundedJson, DeepNestingIsRefusedBeforeParsing) {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    std::string error;
    const auto value = parseBoundedJson(deep, {}, &error);
    EXPECT_TRUE(value.is_discarded());
    EXPECT_NE(error.find("nested deeper than 256"), std::string::npos) << error;
    // Just inside the limit still parses (and can be copied and dumped without trouble).
    const std::string ok = std::string(256, '[') + std::string(256, ']');
    const auto fine = parseBoundedJson(ok);
    ASSERT_FALSE(fine.is_discarded());
    EXPECT_EQ(fine.dump().size(), 512u);
}

TEST(BoundedJson, SizeLimitAndGarbage) {
    std::string error;
    EXPECT_TRUE(
        parseBoundedJson(std::string(100, ' ') + "1", {.maxBytes = 50}, &error).is_discarded());
    EXPECT_NE(error.find("larger than 50 bytes"), std::string::npos) << error;
    EXPECT_TRUE(parseBoundedJson("{not json", {}, &error).is_discarded());
    EXPECT_EQ(error, "not valid JSON (syntax error at byte 3)");
    // A number too large for a double: nlohmann throws out_of_range, not parse_error, for it
    // (an uncaught one aborted `kwb episodes import` under the fuzzer).
    EXPECT_TRUE(parseBoundedJson(R"({"x": 9e99999999})", {}, &error).is_discarded());
    EXPECT_EQ(error, "not valid JSON (a number out of range)");
    std::istringstream stream(R"({"from": "a stream"})");
    EXPECT_EQ(parseBoundedJson(stream)["from"], "a stream");
}
