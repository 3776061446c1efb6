#include "engine/model/choice_grammar.h"

#include <gtest/gtest.h>

using namespace kwb::model;

namespace {

ChoiceGrammar parsed(const std::string& text) {
    std::string error;
    auto g = ChoiceGrammar::parse(text, &error);
    EXPECT_TRUE(g) << error;
    return g ? *g : ChoiceGrammar();
}

// A made-up vocabulary: single characters, a few multi-character pieces, a special token (no
// bytes) and the end token (id 0).
std::vector<std::string> vocabulary() {
    std::vector<std::string> v = {"",   "a",  "b",  "=", " ", "1",  "2",    "4",
                                  "12", "a=", "=4", "x", "",  "ab", "b=2 a"};
    return v;
}

std::vector<int> allowedIds(const GrammarMatcher& m) {
    std::vector<int> ids;
    const auto allowed = m.allowedTokens();
    for (std::size_t i = 0; i < allowed.size(); ++i)
        if (allowed[i])
            ids.push_back(int(i));
    return ids;
}

} // namespace

TEST(ChoiceGrammar, ParsesGroupsAndLiteralsIntoSegments) {
    const ChoiceGrammar g = parsed("threads={64|128} vec={1|4}");
    ASSERT_EQ(g.segments().size(), 4u);
    EXPECT_EQ(g.segments()[0], std::vector<std::string>{"threads="});
    EXPECT_EQ(g.segments()[1], (std::vector<std::string>{"64", "128"}));
    EXPECT_EQ(g.segments()[2], std::vector<std::string>{" vec="});
    EXPECT_EQ(g.languageSize(), 4.0);
    EXPECT_TRUE(g.matches("threads=128 vec=4"));
    EXPECT_FALSE(g.matches("threads=128 vec=2"));
    EXPECT_FALSE(g.matches("threads=128 vec=4 "));
    EXPECT_FALSE(g.matches("threads=12"));
}

TEST(ChoiceGrammar, EscapesStandForTheCharacters) {
    const ChoiceGrammar g = parsed(R"(\{x\}={a\|b|c})");
    EXPECT_TRUE(g.matches("{x}=a|b"));
    EXPECT_TRUE(g.matches("{x}=c"));
    EXPECT_FALSE(g.matches("{x}=a"));
}

TEST(ChoiceGrammar, PrefixSharingChoicesAllMatch) {
    const ChoiceGrammar g = parsed("n={1|12|124}!");
    EXPECT_TRUE(g.matches("n=1!"));
    EXPECT_TRUE(g.matches("n=12!"));
    EXPECT_TRUE(g.matches("n=124!"));
    EXPECT_FALSE(g.matches("n=2!"));
}

TEST(ChoiceGrammar, MalformedTextIsAnErrorThatSaysWhy) {
    for (const char* bad : {"a={1|2", "a={1|{2}}", "a=1}", "{}", "", "a=\\"}) {
        std::string error;
        EXPECT_FALSE(ChoiceGrammar::parse(bad, &error)) << bad;
        EXPECT_FALSE(error.empty()) << bad;
    }
}

TEST(GrammarMatcher, AllowsOnlyTokensThatKeepATextOfTheLanguage) {
    const ChoiceGrammar g = parsed("a={1|12|4}");
    const auto v = vocabulary();
    GrammarMatcher m(g, v, 0);
    // "a" and "a=" start it; "ab" and "b=2 a" do not; nothing with no bytes.
    EXPECT_EQ(allowedIds(m), (std::vector<int>{1, 9}));
    ASSERT_TRUE(m.accept(9)); // "a="
    EXPECT_FALSE(m.complete());
    EXPECT_EQ(allowedIds(m), (std::vector<int>{5, 7, 8})); // "1", "4", "12"
    ASSERT_TRUE(m.accept(5));                              // "1": a string, and a prefix of "12"
    EXPECT_TRUE(m.complete());
    EXPECT_TRUE(m.canContinue());
    EXPECT_EQ(allowedIds(m), (std::vector<int>{0, 6})); // the end token or "2"
    EXPECT_FALSE(m.accept(7));                          // "4" would leave the language
    ASSERT_TRUE(m.accept(6));
    EXPECT_FALSE(m.canContinue());
    EXPECT_EQ(allowedIds(m), std::vector<int>{0});
    ASSERT_TRUE(m.accept(0));
    EXPECT_TRUE(m.finished());
    EXPECT_TRUE(allowedIds(m).empty());
}

TEST(GrammarMatcher, TheEndTokenWaitsForAWholeString) {
    const ChoiceGrammar g = parsed("a={1|4}");
    const auto v = vocabulary();
    GrammarMatcher m(g, v, 0);
    EXPECT_FALSE(m.accept(0));
    ASSERT_TRUE(m.accept(1));
    EXPECT_FALSE(m.accept(0));
    ASSERT_TRUE(m.accept(10)); // "=4" crosses from the literal into the group
    EXPECT_TRUE(m.complete());
    EXPECT_TRUE(m.accept(0));
}

TEST(GrammarMatcher, ATokenSpanningSeveralSegmentsIsAllowed) {
    const ChoiceGrammar g = parsed("b={2|4} a={1|2}");
    const auto v = vocabulary();
    GrammarMatcher m(g, v, 0);
    const auto ids = allowedIds(m);
    EXPECT_NE(std::find(ids.begin(), ids.end(), 14), ids.end()); // "b=2 a"
    ASSERT_TRUE(m.accept(14));
    ASSERT_TRUE(m.accept(3)); // "="
    ASSERT_TRUE(m.accept(6)); // "2"
    EXPECT_TRUE(m.complete());
}
