// Compile / Verify / Profile: the engine's Evaluator behind the agent's tools, on tiny pure-Python
// workspaces (nothing to build, so each case takes seconds).
#include "agent/tools/tool_registry.h"
#include "agent/tools/workspace_tools.h"
#include "tests/engine/evaluation_fixture.h"

using namespace kwb;
using namespace kwb::test;
using namespace kwb::agent;
using nlohmann::json;

namespace {

const std::string kGoodForward = "        return x * self.weight * self.factor";

class ToolsWorkspaceTest : public EvaluationTest {
protected:
    void SetUp() override {
        EvaluationTest::SetUp();
        for (auto& tool : makeWorkspaceTools())
            registry_.add(std::move(tool));
        context_.evaluation = cpuOptions();
        context_.python = KWB_TEST_EXPECTED_PYTHON;
    }

    ToolResult call(const std::string& name, const fs::path& workspace) {
        context_.workspace = workspace.string();
        return registry_.run(name, json::object(), context_);
    }

    ToolRegistry registry_;
    ToolContext context_;
};

std::vector<std::string> stageNames(const json& evaluation) {
    std::vector<std::string> names;
    for (const auto& stage : evaluation["stages"])
        names.push_back(stage["name"]);
    return names;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST_F(ToolsWorkspaceTest, VerifyReturnsTheEvaluationWithItsReward) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kGoodForward));
    ToolResult r = call("Verify", ws);
    ASSERT_FALSE(r.isError) << r.text;
    EXPECT_EQ(r.data["mode"], "verify");
    const json& evaluation = r.data["evaluation"];
    EXPECT_EQ(evaluation["format"], "kwb-evaluation");
    ASSERT_TRUE(evaluation.contains("reward")) << evaluation.dump(2);
    // Correct, but computed with torch ops instead of kernels: the reward is -1, and says why.
    EXPECT_EQ(evaluation["reward"], -1) << r.text;
    EXPECT_TRUE(contains(r.text, "reward -1")) << r.text;
    EXPECT_TRUE(contains(r.text, "checks: 2/2 passed")) << r.text;
    EXPECT_TRUE(contains(r.text, "torch_fallback")) << r.text;
    const auto stages = stageNames(evaluation);
    EXPECT_NE(std::find(stages.begin(), stages.end(), "verify"), stages.end());
    EXPECT_EQ(std::find(stages.begin(), stages.end(), "profile"), stages.end()) << r.text;
}

TEST_F(ToolsWorkspaceTest, VerifyShowsAWrongAnswer) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate("        return x * 0"));
    ToolResult r = call("Verify", ws);
    ASSERT_FALSE(r.isError) << r.text;
    EXPECT_EQ(r.data["evaluation"]["reward"], -1);
    EXPECT_EQ(r.data["evaluation"]["correct"], false);
    EXPECT_TRUE(contains(r.text, "verify: failed")) << r.text;
}

TEST_F(ToolsWorkspaceTest, CompileStopsAfterTheBuild) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kGoodForward));
    ToolResult r = call("Compile", ws);
    ASSERT_FALSE(r.isError) << r.text;
    EXPECT_EQ(r.data["mode"], "compile");
    const auto stages = stageNames(r.data["evaluation"]);
    EXPECT_NE(std::find(stages.begin(), stages.end(), "compile"), stages.end()) << r.text;
    // Verification is recorded as skipped, not run: the record says why there is no reward.
    for (const auto& stage : r.data["evaluation"]["stages"])
        if (stage["name"] == "verify")
            EXPECT_EQ(stage["status"], "skipped") << r.text;
    EXPECT_EQ(r.data["evaluation"]["reward_reason"], "compiled; not verified (compile only)");
    EXPECT_EQ(r.data["evaluation"]["failure"]["kind"], "") << r.data["evaluation"].dump(2);
    EXPECT_TRUE(contains(r.text, "compile: skipped")) << r.text;
}

TEST_F(ToolsWorkspaceTest, NotAWorkspaceIsAnErrorResult) {
    ToolResult r = call("Profile", root_ / "nothing-here");
    EXPECT_TRUE(r.isError);
    EXPECT_TRUE(contains(r.text, "Profile: ")) << r.text;
    EXPECT_TRUE(contains(r.text, "is not a workspace")) << r.text;
}
