// The references' descriptions an evaluation service keeps from inspect to inspect: found only
// for the same reference bytes, device, seed (any seed, for one the stage found the seed does not
// reach), input budget, interpreter and pair mode, kept only when well-formed, and bounded.
#include "engine/evaluation/reference_descriptions.h"
#include "engine/system/content_hash.h"

#include <gtest/gtest.h>
#include <thread>
#include <vector>

namespace kwb::test {
namespace {

using nlohmann::json;

json description(int size = 16) {
    const json tensor = {{"type", "tensor"}, {"shape", {8, size}}, {"dtype", "float32"}};
    return {{"inputs", {tensor}},     {"init_inputs", {{{"type", "float"}, {"value", 2.0}}}},
            {"outputs", {tensor}},    {"parameters", {"weight"}},
            {"has_get_inputs", true}, {"has_get_init_inputs", true}};
}

ReferenceDescriptionKey key() {
    return {.referenceSha256 = sha256Hex("class Model: ..."),
            .device = "cuda",
            .seed = 42,
            .inputBudgetBytes = 1ULL << 30,
            .python = "/usr/bin/python3",
            .pairMode = false};
}

// key() with one part changed, each part in turn: the seed among them only with `seedToo`.
std::vector<ReferenceDescriptionKey> keysDifferingInOnePart(bool seedToo) {
    std::vector<ReferenceDescriptionKey> others(5, key());
    others[0].referenceSha256 = sha256Hex("class Model: ... # edited");
    others[1].device = "cpu";
    others[2].inputBudgetBytes = 2ULL << 30;
    others[3].python = "/opt/venv/bin/python";
    others[4].pairMode = true;
    if (seedToo) {
        others.push_back(key());
        others.back().seed = 43;
    }
    return others;
}

TEST(ReferenceDescriptions, TheSameKeyFindsWhatWasStored) {
    ReferenceDescriptions kept;
    EXPECT_FALSE(kept.find(key()).has_value());
    ASSERT_TRUE(kept.store(key(), description()));
    const std::optional<json> found = kept.find(key());
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(*found, description());
    // A second store of the key replaces the entry and adds none.
    ASSERT_TRUE(kept.store(key(), description(32)));
    EXPECT_EQ(kept.size(), 1u);
    EXPECT_EQ(kept.find(key())->at("inputs")[0]["shape"][1], 32);
}

TEST(ReferenceDescriptions, AnyOtherPartOfTheKeyMisses) {
    ReferenceDescriptions kept;
    ASSERT_TRUE(kept.store(key(), description()));
    const std::vector<ReferenceDescriptionKey> others = keysDifferingInOnePart(true);
    for (std::size_t i = 0; i < others.size(); ++i)
        EXPECT_FALSE(kept.find(others[i]).has_value()) << "key part " << i;
    EXPECT_TRUE(kept.find(key()).has_value());
}

// RL rollouts and KernelBench pairs draw a fresh seed per evaluation: a description the stage
// found not to depend on the seed serves them all, one that may depends only its own seed.
TEST(ReferenceDescriptions, ADescriptionForAnySeedServesEverySeedOneOfASeedOnlyThatSeed) {
    ReferenceDescriptions kept;
    ReferenceDescriptionKey dependent = key();
    dependent.referenceSha256 = sha256Hex("class Model: ... # shapes from random.randint");
    ASSERT_TRUE(kept.store(dependent, description(), false));
    ASSERT_TRUE(kept.store(key(), description(), true));
    EXPECT_EQ(kept.size(), 2u) << "one entry each";
    for (const std::uint64_t seed : {42ULL, 43ULL, 1ULL, 987654321ULL}) {
        ReferenceDescriptionKey any = key();
        any.seed = seed;
        EXPECT_TRUE(kept.find(any).has_value()) << "seed " << seed;
        ReferenceDescriptionKey own = dependent;
        own.seed = seed;
        EXPECT_EQ(kept.find(own).has_value(), seed == 42) << "seed " << seed;
    }
    // Every other part of the key still counts.
    std::vector<ReferenceDescriptionKey> others = keysDifferingInOnePart(false);
    for (std::size_t i = 0; i < others.size(); ++i) {
        others[i].seed = 43;
        EXPECT_FALSE(kept.find(others[i]).has_value()) << "key part " << i;
    }
    // A seed's own entry comes first.
    ReferenceDescriptionKey seven = key();
    seven.seed = 7;
    ASSERT_TRUE(kept.store(seven, description(32)));
    EXPECT_EQ(kept.find(seven)->at("inputs")[0]["shape"][1], 32);
    EXPECT_EQ(kept.find(key())->at("inputs")[0]["shape"][1], 16);
}

TEST(ReferenceDescriptions, OnlyAWellFormedDescriptionOfAKnownContentIsKept) {
    ReferenceDescriptions kept;
    // An inspect result carries more than the description: only the description is kept.
    json result = description();
    result["ok"] = true;
    result["flags"] = json::array();
    ASSERT_TRUE(kept.store(key(), result));
    EXPECT_EQ(*kept.find(key()), description());

    ReferenceDescriptionKey noContent = key();
    noContent.referenceSha256.clear();
    EXPECT_FALSE(kept.store(noContent, description())) << "an unreadable reference";
    for (const char* field : {"inputs", "init_inputs", "outputs", "parameters", "has_get_inputs",
                              "has_get_init_inputs"}) {
        json missing = description();
        missing.erase(field);
        ReferenceDescriptionKey other = key();
        other.seed = 7;
        EXPECT_FALSE(kept.store(other, missing)) << field;
        json mistyped = description();
        mistyped[field] = "text";
        EXPECT_FALSE(kept.store(other, mistyped)) << field;
    }
    json badParameter = description();
    badParameter["parameters"] = {"weight", 3};
    EXPECT_FALSE(kept.store(key(), badParameter));
    EXPECT_EQ(kept.size(), 1u);
}

TEST(ReferenceDescriptions, TheOldestEntryGoesWhenFull) {
    ReferenceDescriptions kept(3);
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        ReferenceDescriptionKey k = key();
        k.seed = seed;
        ASSERT_TRUE(kept.store(k, description()));
        EXPECT_LE(kept.size(), 3u);
    }
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        ReferenceDescriptionKey k = key();
        k.seed = seed;
        EXPECT_EQ(kept.find(k).has_value(), seed >= 3) << "seed " << seed;
    }
    EXPECT_EQ(ReferenceDescriptions().size(), 0u);
}

TEST(ReferenceDescriptions, ManyThreadsStoreAndFindAtOnce) {
    ReferenceDescriptions kept(64);
    std::vector<std::jthread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&kept, t] {
            for (std::uint64_t i = 0; i < 500; ++i) {
                ReferenceDescriptionKey k = key();
                k.seed = i % 100;
                k.device = t % 2 ? "cpu" : "cuda";
                kept.store(k, description());
                if (const std::optional<json> found = kept.find(k)) {
                    EXPECT_EQ(*found, description());
                }
            }
        });
    threads.clear();
    EXPECT_EQ(kept.size(), 64u);
}

} // namespace
} // namespace kwb::test
