// The file tools and the registry: the path policy, exact edits, caps, and bad calls that must
// come back as error results.
#include "agent/tools/files/file_tools.h"
#include "agent/tools/files/glob_pattern.h"
#include "agent/tools/files/workspace_paths.h"
#include "agent/tools/tool_registry.h"
#include "tests/test_files.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sstream>

using namespace kwb::agent;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using kwb::test::readText;
using kwb::test::writeText;

class ToolsFilesTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::random_device device;
        root_ = fs::temp_directory_path() / ("kwb-tools-" + std::to_string(device()));
        ws_ = root_ / "ws";
        writeText(ws_ / "model.py", "class Model: pass\n");
        writeText(ws_ / "binding.cpp", "// fixed\n");
        writeText(ws_ / "utils" / "compile.py", "print('harness')\n");
        writeText(ws_ / "model_new.py", "import torch\n");
        writeText(ws_ / "kernels" / "a.cu", "__global__ void a() {}\nint x = 1;\nint x = 1;\n");
        writeText(root_ / "outside" / "secret.txt", "top secret\n");
        context_.workspace = ws_.string();
        context_.onFileChanged = [this](const FileChange& change) { changes_.push_back(change); };
        registry_.add(makeReadTool());
        registry_.add(makeWriteTool());
        registry_.add(makeEditTool());
        registry_.add(makeMultiEditTool());
        registry_.add(makeGlobTool());
        registry_.add(makeGrepTool());
        registry_.add(makeTodoWriteTool());
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }

    ToolResult call(const std::string& name, const json& arguments) {
        return registry_.run(name, arguments, context_);
    }

    fs::path root_;
    fs::path ws_;
    ToolContext context_;
    ToolRegistry registry_;
    std::vector<FileChange> changes_;
};

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST_F(ToolsFilesTest, PathsOutsideTheWorkspaceAreRejected) {
    ToolResult dots = call("Read", {{"file_path", "../outside/secret.txt"}});
    EXPECT_TRUE(dots.isError);
    EXPECT_TRUE(contains(dots.text, "outside the workspace")) << dots.text;
    EXPECT_FALSE(contains(dots.text, "top secret"));

    ToolResult sneaky = call("Read", {{"file_path", "kernels/../../outside/secret.txt"}});
    EXPECT_TRUE(sneaky.isError) << sneaky.text;

    ToolResult absolute = call("Read", {{"file_path", "/etc/hostname"}});
    EXPECT_TRUE(absolute.isError);
    EXPECT_TRUE(contains(absolute.text, "outside the workspace")) << absolute.text;

    fs::create_directory_symlink(root_ / "outside", ws_ / "kernels" / "link");
    ToolResult viaLink = call("Read", {{"file_path", "kernels/link/secret.txt"}});
    EXPECT_TRUE(viaLink.isError);
    EXPECT_TRUE(contains(viaLink.text, "resolves to")) << viaLink.text;

    // A dangling symlink would make a write create its target, wherever it points.
    fs::create_symlink(root_ / "outside" / "planted.cu", ws_ / "kernels" / "b.cu");
    ToolResult write = call("Write", {{"file_path", "kernels/b.cu"}, {"content", "x"}});
    EXPECT_TRUE(write.isError) << write.text;
    EXPECT_FALSE(fs::exists(root_ / "outside" / "planted.cu"));

    // Absolute paths inside the workspace are fine.
    ToolResult inside = call("Read", {{"file_path", (ws_ / "model_new.py").string()}});
    EXPECT_FALSE(inside.isError) << inside.text;
    EXPECT_TRUE(contains(inside.text, "import torch"));
}

TEST_F(ToolsFilesTest, ProtectedFilesAreReadOnly) {
    for (const std::string path : {"model.py", "binding.cpp", "binding_registry.h",
                                   "utils/compile.py", "utils/new_helper.py", "./model.py"}) {
        ToolResult r = call("Write", {{"file_path", path}, {"content", "hacked"}});
        EXPECT_TRUE(r.isError) << path;
        EXPECT_TRUE(contains(r.text, "protected")) << r.text;
    }
    EXPECT_EQ(readText(ws_ / "model.py"), "class Model: pass\n");
    EXPECT_FALSE(fs::exists(ws_ / "utils" / "new_helper.py"));

    ToolResult edit =
        call("Edit", {{"file_path", "binding.cpp"}, {"old_string", "fixed"}, {"new_string", "x"}});
    EXPECT_TRUE(edit.isError);
    // Through a symlink that points at a protected file.
    fs::create_symlink(ws_ / "model.py", ws_ / "kernels" / "alias.py");
    ToolResult alias = call("Write", {{"file_path", "kernels/alias.py"}, {"content", "x"}});
    EXPECT_TRUE(alias.isError);
    EXPECT_TRUE(contains(alias.text, "model.py is protected")) << alias.text;
    EXPECT_EQ(readText(ws_ / "model.py"), "class Model: pass\n");

    EXPECT_FALSE(call("Read", {{"file_path", "model.py"}}).isError);
    EXPECT_TRUE(changes_.empty());
    EXPECT_TRUE(isProtectedWorkspacePath("utils"));
    EXPECT_FALSE(isProtectedWorkspacePath("kernels/gemm_binding.cpp"));
}

TEST_F(ToolsFilesTest, ReadShowsNumberedLinesWithOffsetAndLimit) {
    std::string text;
    for (int i = 1; i <= 10; ++i)
        text += "line " + std::to_string(i) + "\n";
    writeText(ws_ / "notes.txt", text);

    ToolResult all = call("Read", {{"file_path", "notes.txt"}});
    EXPECT_FALSE(all.isError);
    EXPECT_TRUE(contains(all.text, "     1\tline 1\n")) << all.text;
    EXPECT_TRUE(contains(all.text, "    10\tline 10\n"));

    ToolResult part = call("Read", {{"file_path", "notes.txt"}, {"offset", 3}, {"limit", 2}});
    EXPECT_EQ(part.text, "     3\tline 3\n     4\tline 4\n(lines 3-4 of 10; use offset to read "
                         "further)");

    ToolResult past = call("Read", {{"file_path", "notes.txt"}, {"offset", 11}});
    EXPECT_TRUE(past.isError);
    EXPECT_TRUE(contains(past.text, "past the end")) << past.text;

    EXPECT_TRUE(contains(call("Read", {{"file_path", "missing.cu"}}).text, "does not exist"));
    EXPECT_TRUE(contains(call("Read", {{"file_path", "kernels"}}).text, "folder"));
    writeText(ws_ / "blob.bin", std::string("ab\0cd", 5));
    EXPECT_TRUE(contains(call("Read", {{"file_path", "blob.bin"}}).text, "binary"));
}

TEST_F(ToolsFilesTest, WriteCreatesFoldersAndReportsTheChange) {
    ToolResult r = call("Write", {{"file_path", "kernels/deep/new.cu"}, {"content", "int y;\n"}});
    EXPECT_FALSE(r.isError) << r.text;
    EXPECT_TRUE(contains(r.text, "created kernels/deep/new.cu")) << r.text;
    EXPECT_EQ(readText(ws_ / "kernels" / "deep" / "new.cu"), "int y;\n");
    ASSERT_EQ(changes_.size(), 1u);
    EXPECT_EQ(changes_[0].path, "kernels/deep/new.cu");
    EXPECT_FALSE(changes_[0].before.has_value());

    ToolResult again =
        call("Write", {{"file_path", "kernels/deep/new.cu"}, {"content", "int z;\n"}});
    EXPECT_TRUE(contains(again.text, "overwrote")) << again.text;
    ASSERT_EQ(changes_.size(), 2u);
    EXPECT_EQ(changes_[1].before.value_or(""), "int y;\n");
    EXPECT_EQ(changes_[1].after, "int z;\n");
}

TEST_F(ToolsFilesTest, EditNeedsExactlyOneMatchUnlessReplaceAll) {
    const std::string original = readText(ws_ / "kernels" / "a.cu");

    ToolResult none = call(
        "Edit", {{"file_path", "kernels/a.cu"}, {"old_string", "int q"}, {"new_string", "int r"}});
    EXPECT_TRUE(none.isError);
    EXPECT_EQ(none.text.rfind("Edit: 'old_string' not found in kernels/a.cu", 0), 0u) << none.text;

    ToolResult many = call("Edit", {{"file_path", "kernels/a.cu"},
                                    {"old_string", "int x = 1;"},
                                    {"new_string", "int x = 2;"}});
    EXPECT_TRUE(many.isError);
    EXPECT_TRUE(contains(many.text, "matches 2 times")) << many.text;
    EXPECT_TRUE(contains(many.text, "lines 2, 3")) << many.text;
    EXPECT_EQ(readText(ws_ / "kernels" / "a.cu"), original);

    ToolResult one = call("Edit", {{"file_path", "kernels/a.cu"},
                                   {"old_string", "void a()"},
                                   {"new_string", "void a_fast()"}});
    EXPECT_FALSE(one.isError) << one.text;
    EXPECT_TRUE(contains(one.text, "1 replacement")) << one.text;
    EXPECT_TRUE(contains(readText(ws_ / "kernels" / "a.cu"), "a_fast"));
    ASSERT_EQ(changes_.size(), 1u);
    EXPECT_EQ(changes_[0].before.value_or(""), original);

    ToolResult all = call("Edit", {{"file_path", "kernels/a.cu"},
                                   {"old_string", "int x = 1;"},
                                   {"new_string", "int x = 2;"},
                                   {"replace_all", true}});
    EXPECT_FALSE(all.isError) << all.text;
    EXPECT_EQ(all.data["replacements"], 2);
    EXPECT_FALSE(contains(readText(ws_ / "kernels" / "a.cu"), "int x = 1;"));

    EXPECT_TRUE(
        call("Edit", {{"file_path", "kernels/a.cu"}, {"old_string", "a"}, {"new_string", "a"}})
            .isError);
    EXPECT_TRUE(
        call("Edit", {{"file_path", "nope.cu"}, {"old_string", "a"}, {"new_string", "b"}}).isError);
}

TEST_F(ToolsFilesTest, MultiEditAppliesAllOrNothing) {
    const std::string original = readText(ws_ / "kernels" / "a.cu");
    ToolResult failed =
        call("MultiEdit", {{"file_path", "kernels/a.cu"},
                           {"edits",
                            {{{"old_string", "void a()"}, {"new_string", "void b()"}},
                             {{"old_string", "missing"}, {"new_string", "x"}}}}});
    EXPECT_TRUE(failed.isError);
    EXPECT_TRUE(contains(failed.text, "edit 2 of 2")) << failed.text;
    EXPECT_TRUE(contains(failed.text, "no edit was made")) << failed.text;
    EXPECT_EQ(readText(ws_ / "kernels" / "a.cu"), original);
    EXPECT_TRUE(changes_.empty());

    // Each edit sees the result of the one before.
    ToolResult ok =
        call("MultiEdit",
             {{"file_path", "kernels/a.cu"},
              {"edits",
               {{{"old_string", "void a()"}, {"new_string", "void b()"}},
                {{"old_string", "void b()"}, {"new_string", "void c()"}},
                {{"old_string", "int x = 1;"}, {"new_string", "int y;"}, {"replace_all", true}}}}});
    EXPECT_FALSE(ok.isError) << ok.text;
    EXPECT_EQ(readText(ws_ / "kernels" / "a.cu"), "__global__ void c() {}\nint y;\nint y;\n");
    ASSERT_EQ(changes_.size(), 1u);
    EXPECT_EQ(changes_[0].tool, "MultiEdit");
}

TEST_F(ToolsFilesTest, GlobIsSortedCappedAndSkipsBuildOutput) {
    for (int i = 249; i >= 0; --i) {
        char name[32];
        std::snprintf(name, sizeof name, "k%03d.cu", i);
        writeText(ws_ / "kernels" / "many" / name, "");
    }
    writeText(ws_ / "build" / "ignored.cu", "");
    writeText(ws_ / "kernels" / "a_binding.cpp", "");

    ToolResult r = call("Glob", {{"pattern", "**/*.cu"}});
    EXPECT_FALSE(r.isError);
    EXPECT_EQ(r.data["total"], 251);
    ASSERT_EQ(r.data["files"].size(), 200u);
    EXPECT_EQ(r.data["files"][0], "kernels/a.cu");
    EXPECT_EQ(r.data["files"][1], "kernels/many/k000.cu");
    EXPECT_TRUE(contains(r.text, "51 more files not shown")) << r.text.substr(r.text.size() - 200);
    EXPECT_FALSE(contains(r.text, "build/"));

    ToolResult braces = call("Glob", {{"pattern", "*.{cu,cpp}"}, {"path", "kernels"}});
    EXPECT_EQ(braces.text, "kernels/a.cu\nkernels/a_binding.cpp\n");
    ToolResult top = call("Glob", {{"pattern", "*.py"}});
    EXPECT_EQ(top.text, "model.py\nmodel_new.py\n");
    ToolResult none = call("Glob", {{"pattern", "*.rs"}});
    EXPECT_FALSE(none.isError);
    EXPECT_TRUE(contains(none.text, "no files match"));
    EXPECT_TRUE(call("Glob", {{"pattern", "../*"}}).isError);
    EXPECT_TRUE(call("Glob", {{"pattern", "*"}, {"path", "../outside"}}).isError);
}

TEST(GlobPatternTest, MatchesTheSyntaxModelsWrite) {
    EXPECT_TRUE(GlobPattern("**/*.cu").matches("a.cu"));
    EXPECT_TRUE(GlobPattern("**/*.cu").matches("kernels/deep/a.cu"));
    EXPECT_FALSE(GlobPattern("**/*.cu").matches("kernels/a.cpp"));
    EXPECT_TRUE(GlobPattern("kernels/**").matches("kernels/x/y.py"));
    EXPECT_TRUE(GlobPattern("a**b").matches("a/x/b"));
    EXPECT_FALSE(GlobPattern("*.cu").matches("kernels/a.cu"));
    EXPECT_TRUE(GlobPattern("*.cu", /*anyFolderWithoutSlash=*/true).matches("kernels/a.cu"));
    EXPECT_TRUE(GlobPattern("*.cu", /*anyFolderWithoutSlash=*/true).matches("a.cu"));
    EXPECT_FALSE(GlobPattern("*.cu", /*anyFolderWithoutSlash=*/true).matches("kernels/a.cuh"));
    EXPECT_TRUE(GlobPattern("./model?new.py").matches("model_new.py"));
    EXPECT_FALSE(GlobPattern("model?new.py").matches("model/new.py"));
    EXPECT_TRUE(GlobPattern("k[0-9][!a-z].cu").matches("k1_.cu"));
    EXPECT_FALSE(GlobPattern("k[0-9][!a-z].cu").matches("k1b.cu"));
    EXPECT_TRUE(GlobPattern("[]x].py").matches("].py"));
    EXPECT_TRUE(GlobPattern("{a,b{c,d},}.py").matches("bd.py"));
    EXPECT_TRUE(GlobPattern("{a,b{c,d},}.py").matches(".py"));
    EXPECT_FALSE(GlobPattern("{a,b{c,d},}.py").matches("b.py"));
    EXPECT_TRUE(GlobPattern("x,y}.(py)+").matches("x,y}.(py)+"));
    EXPECT_TRUE(GlobPattern("a[bc").matches("a[bc"));
    EXPECT_FALSE(GlobPattern("{a,b").valid());
    EXPECT_FALSE(GlobPattern("[z-a]").valid());
}

// A 200 kB pattern overflowed the stack of std::regex's compiler, and "*a*a*...*b" against a
// long name of 'a's backtracked for ever; both now finish at once, and an overlong pattern is
// refused by name.
TEST(GlobPatternTest, HostilePatternsAreBoundedInTimeAndDepth) {
    const std::string name(120, 'a');
    std::string redos;
    for (int i = 0; i < 40; ++i)
        redos += "*a";
    redos += "*b";
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(GlobPattern(redos).matches(name + ".txt"));
    EXPECT_TRUE(GlobPattern(redos.substr(0, redos.size() - 1)).matches(name + ".txt"));
    std::string braces;
    for (int i = 0; i < 800; ++i)
        braces += "{*a,";
    braces += "b" + std::string(800, '}');
    EXPECT_TRUE(GlobPattern(braces).valid());
    EXPECT_FALSE(GlobPattern(braces).matches(name + ".txt"));
    EXPECT_TRUE(GlobPattern(braces).matches(name));
    const std::string longest(GlobPattern::kMaxPatternChars, '*');
    EXPECT_TRUE(GlobPattern(longest).matches(name));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));

    const GlobPattern tooLong(std::string(200000, 'A'));
    EXPECT_FALSE(tooLong.valid());
    EXPECT_TRUE(contains(tooLong.error(), "limit is 4096")) << tooLong.error();
}

TEST_F(ToolsFilesTest, GlobAndGrepRefuseOverlongPatterns) {
    ToolResult glob = call("Glob", {{"pattern", std::string(5 << 20, 'A')}});
    EXPECT_TRUE(glob.isError);
    EXPECT_LT(glob.text.size(), 200u);
    EXPECT_TRUE(contains(glob.text, "characters long")) << glob.text.substr(0, 200);
    ToolResult grep = call("Grep", {{"pattern", std::string(200000, 'A')}});
    EXPECT_TRUE(grep.isError);
    EXPECT_TRUE(contains(grep.text, "characters long")) << grep.text.substr(0, 200);
}

TEST_F(ToolsFilesTest, GrepSearchesContentsWithCaps) {
    std::string text;
    for (int i = 1; i <= 30; ++i)
        text += "value_" + std::to_string(i) + " = " + std::to_string(i * 7) + "\n";
    writeText(ws_ / "kernels" / "values.py", text);
    fs::create_directory_symlink(root_ / "outside", ws_ / "kernels" / "link");

    ToolResult files = call("Grep", {{"pattern", "value_\\d+"}});
    EXPECT_FALSE(files.isError) << files.text;
    EXPECT_EQ(files.text, "kernels/values.py\n");

    ToolResult content =
        call("Grep", {{"pattern", "^value_2\\d? "}, {"output_mode", "content"}, {"head_limit", 5}});
    EXPECT_FALSE(content.isError) << content.text;
    EXPECT_TRUE(contains(content.text, "kernels/values.py:2:value_2 = 14\n")) << content.text;
    EXPECT_TRUE(contains(content.text, "6 more lines not shown")) << content.text;
    EXPECT_EQ(content.data["total"], 11);

    ToolResult count = call("Grep", {{"pattern", "VALUE"}, {"-i", true}, {"output_mode", "count"}});
    EXPECT_EQ(count.text, "kernels/values.py:30\n") << count.text;

    ToolResult filtered = call("Grep", {{"pattern", "int"}, {"glob", "*.cu"}});
    EXPECT_EQ(filtered.text, "kernels/a.cu\n");
    ToolResult context =
        call("Grep", {{"pattern", "value_15 "}, {"output_mode", "content"}, {"-C", 1}});
    EXPECT_TRUE(contains(context.text, "kernels/values.py-14-value_14")) << context.text;

    // The file behind the symlink lies outside the workspace and is never read.
    EXPECT_TRUE(contains(call("Grep", {{"pattern", "secret"}}).text, "no matches"));
    ToolResult bad = call("Grep", {{"pattern", "(unclosed"}});
    EXPECT_TRUE(bad.isError) << bad.text;
    EXPECT_TRUE(call("Grep", {{"pattern", "x"}, {"path", "/etc"}}).isError);
}

TEST_F(ToolsFilesTest, TodoWriteKeepsTheListOnTheContext) {
    ToolResult r = call("TodoWrite", {{"todos",
                                       {{{"content", "Read model.py"}, {"status", "completed"}},
                                        {{"content", "Write the kernel"},
                                         {"status", "in_progress"},
                                         {"activeForm", "Writing the kernel"}},
                                        {{"content", "Profile"}, {"status", "pending"}}}}});
    EXPECT_FALSE(r.isError) << r.text;
    EXPECT_EQ(r.text, "todo list (1 of 3 done):\n[x] Read model.py\n[>] Write the kernel\n[ ] "
                      "Profile\n");
    ASSERT_EQ(context_.todos.size(), 3u);
    EXPECT_EQ(context_.todos[1].activeForm, "Writing the kernel");
    ToolResult bad = call("TodoWrite", {{"todos", {{{"content", "x"}, {"status", "someday"}}}}});
    EXPECT_TRUE(bad.isError);
    EXPECT_TRUE(contains(bad.text, "must be one of")) << bad.text;
    EXPECT_EQ(context_.todos.size(), 3u);
}

namespace {
class ThrowingTool : public Tool {
public:
    const ToolSchema& schema() const override { return schema_; }
    ToolResult run(const json&, ToolContext&, std::stop_token) override {
        throw std::runtime_error("boom");
    }
    ToolSchema schema_{"Thrower", "throws", {{"type", "object"}, {"properties", json::object()}}};
};

class FloodTool : public Tool {
public:
    const ToolSchema& schema() const override { return schema_; }
    ToolResult run(const json&, ToolContext&, std::stop_token) override {
        std::string text = "HEAD";
        for (int i = 0; i < 10000; ++i)
            text += "middle ";
        return ToolResult::success(text + "\xff" + "TAIL");
    }
    ToolSchema schema_{"Flood", "floods", {{"type", "object"}, {"properties", json::object()}}};
};
} // namespace

TEST_F(ToolsFilesTest, RegistryTurnsBadCallsIntoErrorResults) {
    ToolResult unknown = call("Delete", json::object());
    EXPECT_TRUE(unknown.isError);
    EXPECT_TRUE(contains(unknown.text, "unknown tool 'Delete'")) << unknown.text;
    EXPECT_TRUE(contains(unknown.text, "Read, Write")) << unknown.text;

    ToolResult notJson =
        registry_.run(kwb::agent::ToolCall{"id1", "Read", "{\"file_path\": "}, context_);
    EXPECT_TRUE(notJson.isError);
    EXPECT_TRUE(contains(notJson.text, "Read: the arguments are not valid JSON")) << notJson.text;

    ToolResult missing = call("Read", json::object());
    EXPECT_EQ(missing.text, "Read: missing required parameter 'file_path'");
    ToolResult wrongType = call("Read", {{"file_path", "a"}, {"limit", "ten"}});
    EXPECT_EQ(wrongType.text, "Read: 'limit' must be an integer, got \"ten\"");
    ToolResult extra = call("Read", {{"path", "model.py"}});
    EXPECT_TRUE(
        contains(extra.text, "unknown parameter 'path' (expected: file_path, limit, offset)"))
        << extra.text;
    // Each of those was the model's malformed call, not a tool that ran and failed.
    for (const ToolResult* bad : {&unknown, &notJson, &missing, &wrongType, &extra})
        EXPECT_TRUE(bad->invalidCall) << bad->text;
    const ToolResult absent = call("Read", {{"file_path", "no_such_file.py"}});
    EXPECT_TRUE(absent.isError) << absent.text;
    EXPECT_FALSE(absent.invalidCall) << "a well-formed call whose file is missing";
    ToolResult nested = call("MultiEdit", {{"file_path", "a"}, {"edits", {{{"old_string", 1}}}}});
    EXPECT_TRUE(contains(nested.text, "missing required parameter 'edits'[0].new_string") ||
                contains(nested.text, "'edits'[0]"))
        << nested.text;
    EXPECT_TRUE(call("Read", json::array()).isError);

    registry_.add(std::make_unique<ThrowingTool>());
    ToolResult thrown = call("Thrower", json::object());
    EXPECT_TRUE(thrown.isError);
    EXPECT_EQ(thrown.text, "Thrower: internal error: boom");

    ToolRegistry small({/*outputLimitBytes=*/1000, /*secrets=*/{}});
    small.add(std::make_unique<FloodTool>());
    ToolResult flood = small.run("Flood", json::object(), context_);
    EXPECT_TRUE(flood.truncated);
    EXPECT_LE(flood.text.size(), 1100u);
    EXPECT_EQ(flood.text.rfind("HEAD", 0), 0u);
    EXPECT_TRUE(contains(flood.text, "\xEF\xBF\xBDTAIL")) << "invalid UTF-8 is replaced";
    EXPECT_TRUE(contains(flood.text, "bytes of output omitted"));
    EXPECT_NO_THROW((void)json(flood.text).dump());

    const auto schemas = registry_.schemas();
    ASSERT_GE(schemas.size(), 7u);
    EXPECT_EQ(schemas[0].name, "Read");
    EXPECT_EQ(schemas[0].parameters["required"][0], "file_path");
}
