#include "engine/evaluation/fast_kernel_build.h"
#include "engine/model/choice_grammar.h"
#include "engine/process/process_runner.h"
#include "engine/system/resource_paths.h"
#include "engine/tuning/tuning_space.h"
#include "engine/workspace/contained_files.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>

using namespace kwb;
namespace fs = std::filesystem;

namespace {

std::vector<TuningSpace> bundledSpaces() {
    std::string error;
    auto spaces = loadTuningSpaces(bundledTuningDirectory(), {}, bundledTasksDirectory(), &error);
    EXPECT_TRUE(spaces) << error;
    return spaces ? *spaces : std::vector<TuningSpace>{};
}

// Every action of a space, knob by knob (the spaces are small: at most a few hundred).
std::vector<TuningSpace::Action> everyAction(const TuningSpace& space) {
    std::vector<TuningSpace::Action> actions{{}};
    for (const TuningKnob& knob : space.knobs) {
        std::vector<TuningSpace::Action> longer;
        for (const auto& a : actions)
            for (const std::string& choice : knob.choices) {
                longer.push_back(a);
                longer.back().push_back(choice);
            }
        actions = std::move(longer);
    }
    return actions;
}

// A few actions in which every two knobs meet in every combination of their choices (greedy
// pairwise covering): where template bugs live (a vector width with a reduction style, say) at a
// fifth of the compiles of every action.
std::vector<TuningSpace::Action> pairwiseActions(const TuningSpace& space) {
    const auto all = everyAction(space);
    std::set<std::tuple<std::size_t, std::string, std::size_t, std::string>> open;
    const auto pairsOf = [&](const TuningSpace::Action& a) {
        std::vector<std::tuple<std::size_t, std::string, std::size_t, std::string>> pairs;
        for (std::size_t i = 0; i < a.size(); ++i)
            for (std::size_t j = i + 1; j < a.size(); ++j)
                pairs.emplace_back(i, a[i], j, a[j]);
        return pairs;
    };
    for (const auto& a : all)
        for (const auto& p : pairsOf(a))
            open.insert(p);
    std::vector<TuningSpace::Action> chosen;
    while (!open.empty()) {
        std::size_t best = 0, bestNew = 0;
        for (std::size_t k = 0; k < all.size(); ++k) {
            std::size_t fresh = 0;
            for (const auto& p : pairsOf(all[k]))
                fresh += open.count(p);
            if (fresh > bestNew)
                best = k, bestNew = fresh;
        }
        for (const auto& p : pairsOf(all[best]))
            open.erase(p);
        chosen.push_back(all[best]);
    }
    return chosen;
}

class ScratchFolder {
public:
    ScratchFolder() {
        char pattern[] = "/tmp/kwb-tuning-XXXXXX";
        path_ = mkdtemp(pattern);
    }
    ~ScratchFolder() { fs::remove_all(path_); }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

void writeSpace(const fs::path& folder, const std::string& json,
                const std::string& model = "x = {{n}}\n") {
    fs::create_directories(folder);
    std::ofstream(folder / "tuning.json") << json;
    std::ofstream(folder / "model_new.py") << model;
}

} // namespace

TEST(TuningSpace, BundledSpacesLoadWithGrammarsThatHoldEveryAction) {
    const auto spaces = bundledSpaces();
    ASSERT_GE(spaces.size(), 4u);
    for (const TuningSpace& space : spaces) {
        std::string error;
        const auto grammar = model::ChoiceGrammar::parse(space.grammar(), &error);
        ASSERT_TRUE(grammar) << space.name << ": " << error;
        EXPECT_EQ(grammar->languageSize(), space.actionCount()) << space.name;
        std::mt19937_64 random(7);
        for (int i = 0; i < 20; ++i) {
            const auto action = space.randomAction(random);
            const std::string text = space.actionText(action);
            EXPECT_TRUE(grammar->matches(text)) << text;
            const auto parsed = space.parseAction(text);
            ASSERT_TRUE(parsed) << text;
            EXPECT_EQ(*parsed, action);
        }
        EXPECT_NE(space.userPrompt().find(space.knobs.front().name + "=<"), std::string::npos);
    }
}

TEST(TuningSpace, ActionsOutsideTheSpaceAreNotParsed) {
    const auto spaces = bundledSpaces();
    ASSERT_FALSE(spaces.empty());
    const TuningSpace& space = spaces.front();
    std::mt19937_64 random(1);
    const std::string good = space.actionText(space.randomAction(random));
    EXPECT_TRUE(space.parseAction(good));
    EXPECT_FALSE(space.parseAction(good + " extra=1"));
    EXPECT_FALSE(space.parseAction(good.substr(0, good.rfind(' '))));
    EXPECT_FALSE(
        space.parseAction(space.knobs.front().name + "=999999 " + good.substr(good.find(' ') + 1)));
    EXPECT_FALSE(space.parseAction(""));
}

// The real environment's compile step on a machine without a GPU: every action of every bundled
// space renders without a placeholder left, and a pairwise-covering set of them compiles with
// NVRTC for sm_90 (the H200's), with both entry points (packed and scalar) in the manifest;
// model_new.py parses as Python. (Every action compiled: 67 s here, against about 15.)
TEST(TuningSpace, EveryActionRendersAndEveryPairOfChoicesCompilesWithNvrtc) {
    ScratchFolder scratch;
    int compiled = 0;
    for (const TuningSpace& space : bundledSpaces()) {
        std::set<std::string> seen; // distinct .cu texts (some knobs change only model_new.py)
        const auto covering = pairwiseActions(space);
        for (const auto& action : everyAction(space)) {
            std::string error;
            const auto files = space.render(action, &error);
            ASSERT_TRUE(files) << error;
            std::string cu;
            for (const auto& [path, content] : *files) {
                EXPECT_EQ(content.find("{{"), std::string::npos) << space.name << "/" << path;
                EXPECT_NE(content.find(space.actionText(action)), std::string::npos)
                    << space.name << "/" << path << " should name its action";
                if (path != "model_new.py")
                    cu += content;
            }
            if (std::find(covering.begin(), covering.end(), action) == covering.end() ||
                !seen.insert(cu).second)
                continue;
            const fs::path workspace = scratch.path() / space.name;
            fs::remove_all(workspace);
            fs::create_directories(workspace);
            for (const auto& [path, content] : *files)
                ASSERT_TRUE(writeFileInside(workspace, path, content, &error)) << error;
            FastKernelBuildRequest request;
            request.workspace = workspace.string();
            request.outputDirectory = (workspace / "build").string();
            const FastKernelBuildResult built = buildFastKernels(request);
            ASSERT_TRUE(built.ok) << space.name << " " << space.actionText(action) << "\n"
                                  << built.log;
            EXPECT_EQ(built.kernels.size(), 2u) << space.name << " " << space.actionText(action);
            ++compiled;
        }
        // model_new.py of one action is valid Python (the others differ only in the values).
        std::string error;
        const auto files = space.render(everyAction(space).front(), &error);
        ASSERT_TRUE(files);
        ProcessSpec parse;
        parse.argv = {"python3", "-c", "import ast, sys; ast.parse(sys.stdin.read())"};
        for (const auto& [path, content] : *files)
            if (path == "model_new.py")
                parse.stdinText = content;
        const ProcessResult parsed = runProcess(parse);
        EXPECT_TRUE(parsed.succeeded()) << space.name << ": " << parsed.err.text;
    }
    EXPECT_GT(compiled, 40);
}

TEST(TuningSpace, BrokenSpacesAreRefusedWithTheReason) {
    ScratchFolder scratch;
    const std::string tasks = bundledTasksDirectory();
    const auto refusal = [&](const std::string& name, const std::string& json,
                             const std::string& model = "x = {{n}}\n") {
        writeSpace(scratch.path() / name, json, model);
        std::string error;
        EXPECT_FALSE(TuningSpace::load((scratch.path() / name).string(), tasks, &error)) << name;
        return error;
    };
    const std::string knobs = R"("knobs": [{"name": "n", "choices": ["1", "2"]}])";
    EXPECT_NE(refusal("not_json", "{").find("not a JSON object"), std::string::npos);
    EXPECT_NE(refusal("no_task", "{" + knobs + R"(, "files": ["model_new.py"]})").find("task"),
              std::string::npos);
    EXPECT_NE(refusal("missing_task",
                      R"({"task": "nope.py", )" + knobs + R"(, "files": ["model_new.py"]})")
                  .find("does not exist"),
              std::string::npos);
    EXPECT_NE(refusal("escaping_task",
                      R"({"task": "../01_gelu.py", )" + knobs + R"(, "files": ["model_new.py"]})")
                  .find("file name"),
              std::string::npos);
    EXPECT_NE(refusal("bad_choice", R"({"task": "01_gelu.py", "knobs": [{"name": "n",
                      "choices": ["a b"]}], "files": ["model_new.py"]})")
                  .find("plain word"),
              std::string::npos);
    EXPECT_NE(refusal("twice", R"({"task": "01_gelu.py", "knobs": [{"name": "n", "choices":
                      ["1"]}, {"name": "n", "choices": ["2"]}], "files": ["model_new.py"]})")
                  .find("twice"),
              std::string::npos);
    EXPECT_NE(refusal("outside", R"({"task": "01_gelu.py", )" + knobs +
                                     R"(, "files": ["model_new.py", "utils/x.py"]})")
                  .find("kernels/"),
              std::string::npos);
    EXPECT_NE(refusal("unknown_placeholder",
                      R"({"task": "01_gelu.py", )" + knobs + R"(, "files": ["model_new.py"]})",
                      "x = {{m}}\n")
                  .find("unknown placeholder {{m}}"),
              std::string::npos);
    EXPECT_NE(refusal("missing_file", R"({"task": "01_gelu.py", )" + knobs +
                                          R"(, "files": ["model_new.py", "kernels/k.cu"]})")
                  .find("cannot read template kernels/k.cu"),
              std::string::npos);

    writeSpace(scratch.path() / "good",
               R"({"task": "01_gelu.py", )" + knobs + R"(, "files": ["model_new.py"]})");
    std::string error;
    const auto good = TuningSpace::load((scratch.path() / "good").string(), tasks, &error);
    ASSERT_TRUE(good) << error;
    EXPECT_EQ(good->grammar(), "n={1|2}");
    const auto files = good->render({"2"}, &error);
    ASSERT_TRUE(files) << error;
    EXPECT_EQ(files->front().second, "x = 2\n");
}
