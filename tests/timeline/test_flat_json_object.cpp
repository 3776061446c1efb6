// Record lines read by simdjson and by nlohmann-json give the same records: every line of the
// recorded file, every prefix of those lines (a writer cut off mid-line), and lines built to sit
// on the edges (escapes, numbers too large for their field, duplicate keys, trailing text).
#include "engine/timeline/flat_json_object.h"
#include "engine/timeline/record_reader.h"
#include "timeline_test_data.h"

#include <gtest/gtest.h>

using namespace kwb::timeline;
using namespace kwb::test;

namespace {

// Everything a record carries, as text, so two parses compare in one assertion.
std::string describe(const std::optional<TimelineRecord>& r) {
    if (!r)
        return "(not a record)";
    const KernelLaunch& k = r->launch;
    std::string text = std::to_string(static_cast<int>(r->type)) + " dev " +
                       std::to_string(r->device) + " ctx " + std::to_string(r->context) +
                       " stream " + std::to_string(r->stream) + " " + std::to_string(r->start) +
                       ".." + std::to_string(r->end) + " name '" + r->name + "' detail '" +
                       r->detail + "' id " + std::to_string(r->id) + " thread " +
                       std::to_string(r->thread) + " bytes " + std::to_string(r->bytes);
    for (int i = 0; i < 3; ++i)
        text += " " + std::to_string(k.grid[i]) + "/" + std::to_string(k.block[i]);
    text += " regs " + std::to_string(k.registersPerThread) + " smem " +
            std::to_string(k.staticSharedBytes) + "+" + std::to_string(k.dynamicSharedBytes) +
            " lmem " + std::to_string(k.localBytesPerThread) + " corr " +
            std::to_string(k.correlationId) + " dropped " + std::to_string(r->droppedCupti) + "/" +
            std::to_string(r->droppedUnknown) + "/" + std::to_string(r->writeFailures);
    return text;
}

void expectSameRecord(const std::string& line) {
    EXPECT_EQ(describe(parseRecordLine(line, FlatJsonParser::Fastest)),
              describe(parseRecordLine(line, FlatJsonParser::Nlohmann)))
        << line;
}

} // namespace

TEST(FlatJsonObject, BothParsersReadTheRecordedFileAlike) {
    int records = 0;
    for (const auto& line : lines(readText(timelineData("two_streams.jsonl")))) {
        expectSameRecord(line);
        records += parseRecordLine(line).has_value();
    }
    EXPECT_EQ(records, 22); // all but the line that is not JSON and the cut-off kernel line
}

TEST(FlatJsonObject, EveryCutOffLineIsRefusedByBoth) {
    for (const auto& line : lines(readText(timelineData("two_streams.jsonl")))) {
        if (line.empty() || line.front() != '{')
            continue;
        for (std::size_t length = 1; length < line.size(); ++length) {
            const std::string cut = line.substr(0, length);
            EXPECT_FALSE(parseRecordLine(cut, FlatJsonParser::Fastest).has_value()) << cut;
            EXPECT_FALSE(parseRecordLine(cut, FlatJsonParser::Nlohmann).has_value()) << cut;
        }
    }
}

TEST(FlatJsonObject, EdgeLinesGetTheSameVerdictFromBoth) {
    const std::vector<std::string> edges = {
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k\"\\\u00e9\ud83d\ude00"})",
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k","regs":4294967296})",
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k","regs":-1})",
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k","grid":[1,2,3,4]})",
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k","grid":[1,2.5,3]})",
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k","grid":[1,"2",3]})",
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k","grid":[4294967296,1,1]})",
        R"({"t":"kernel","dev":0,"stream":7,"start":1.0,"end":2,"name":"k"})",
        R"({"t":"kernel","dev":0,"stream":7,"start":18446744073709551615,"end":2,"name":"k"})",
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k","x":{"y":[1,{"z":null}]}})",
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"first","name":"second"})",
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k"} trailing)",
        R"({"t":"end"}{"t":"end"})",
        R"({"t":"end"}   )",
        R"(  {"t":"end"})",
        R"({"t":"end",})",
        R"({"t":true})",
        R"({"t":null})",
        R"(["t","end"])",
        R"("just a string")",
        R"(42)",
        R"({})",
        R"({"t":"memcpy","dev":0,"stream":7,"start":1,"end":2,"bytes":1e3,"kind":"HtoD"})",
        R"({"t":"marker","id":1,"flag":"start","ts":5,"tid":42,"name":null,"domain":"kwb"})",
        R"({"t":"sync","ctx":1,"start":1,"end":2,"type":"context_synchronize"})",
        R"({"t":"header","format":"kwb-cupti/1","pid":true})",
        "{\"t\":\"kernel\",\"dev\":0,\"stream\":7,\"start\":1,\"end\":2,\"name\":\"k\xff\"}",
        "{\"t\":\"end\"}\r",
    };
    for (const auto& line : edges)
        expectSameRecord(line);
}

TEST(FlatJsonObject, NumbersTooLargeForTheirFieldAreMalformedNotTruncated) {
    // nlohmann-json's DOM had converted 2^32 registers to 0 and a 2^32 grid to 0.
    EXPECT_FALSE(parseRecordLine(
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k","regs":4294967296})"));
    EXPECT_FALSE(parseRecordLine(
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k","grid":[4294967296,1,1]})"));
    const auto fits = parseRecordLine(
        R"({"t":"kernel","dev":0,"stream":7,"start":1,"end":2,"name":"k","regs":4294967295})");
    ASSERT_TRUE(fits);
    EXPECT_EQ(fits->launch.registersPerThread, 4294967295u);
}

TEST(FlatJsonObject, ObjectKeepsItsFieldsAcrossParsesWithoutStaleOnes) {
    FlatJsonObject object;
    ASSERT_TRUE(object.parse(R"({"a":1,"b":"two","c":[3,4]})"));
    EXPECT_EQ(object.size(), 3u);
    ASSERT_TRUE(object.parse(R"({"c":[5]})"));
    EXPECT_EQ(object.size(), 1u);
    EXPECT_EQ(object.find("a"), nullptr) << "a field of the previous line";
    ASSERT_NE(object.find("c"), nullptr);
    EXPECT_EQ(object.find("c")->integers, std::vector<std::int64_t>({5}));
    EXPECT_FALSE(object.parse("{\"a\":"));
    EXPECT_EQ(object.size(), 0u);
}
